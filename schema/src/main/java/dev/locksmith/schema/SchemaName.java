package dev.locksmith.schema;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Validation of the schema name locksmith's objects live in. The name goes into DDL and into
 * jOOQ's render mapping unquoted, so only names that need no quoting are accepted: a lower-case
 * letter or underscore, then lower-case letters, digits or underscores, at most 63 bytes, not a
 * reserved word and not starting with {@code pg_}. Anything else is rejected before any SQL runs.
 */
public final class SchemaName {

    /** The schema when none is chosen. */
    public static final String DEFAULT = "locksmith";

    private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]*");
    private static final int MAX_BYTES = 63;

    /** PostgreSQL's reserved key words (SQL Key Words appendix, "reserved" in PostgreSQL). */
    private static final Set<String> RESERVED = Set.of(
            "all",
            "analyse",
            "analyze",
            "and",
            "any",
            "array",
            "as",
            "asc",
            "asymmetric",
            "authorization",
            "binary",
            "both",
            "case",
            "cast",
            "check",
            "collate",
            "collation",
            "column",
            "concurrently",
            "constraint",
            "create",
            "cross",
            "current_catalog",
            "current_date",
            "current_role",
            "current_schema",
            "current_time",
            "current_timestamp",
            "current_user",
            "default",
            "deferrable",
            "desc",
            "distinct",
            "do",
            "else",
            "end",
            "except",
            "false",
            "fetch",
            "for",
            "foreign",
            "freeze",
            "from",
            "full",
            "grant",
            "group",
            "having",
            "ilike",
            "in",
            "initially",
            "inner",
            "intersect",
            "into",
            "is",
            "isnull",
            "join",
            "lateral",
            "leading",
            "left",
            "like",
            "limit",
            "localtime",
            "localtimestamp",
            "natural",
            "not",
            "notnull",
            "null",
            "offset",
            "on",
            "only",
            "or",
            "order",
            "outer",
            "overlaps",
            "placing",
            "primary",
            "references",
            "returning",
            "right",
            "select",
            "session_user",
            "similar",
            "some",
            "symmetric",
            "system_user",
            "table",
            "tablesample",
            "then",
            "to",
            "trailing",
            "true",
            "union",
            "unique",
            "user",
            "using",
            "variadic",
            "verbose",
            "when",
            "where",
            "window",
            "with");

    private SchemaName() {}

    /**
     * Returns {@code schema} if it is a valid locksmith schema name.
     *
     * @param schema the name to check
     * @return {@code schema}, unchanged
     * @throws IllegalArgumentException naming the problem, for anything else
     * @throws NullPointerException for null
     */
    public static String require(String schema) {
        Objects.requireNonNull(schema, "schema");
        if (schema.isEmpty()) {
            throw new IllegalArgumentException("schema must not be empty");
        }
        if (schema.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new IllegalArgumentException("schema must be at most " + MAX_BYTES + " bytes (PostgreSQL truncates "
                    + "longer identifiers), was " + schema.getBytes(StandardCharsets.UTF_8).length);
        }
        if (!IDENTIFIER.matcher(schema).matches()) {
            throw new IllegalArgumentException(
                    "schema must be a lower-case unquoted identifier ([a-z_][a-z0-9_]*), was '" + schema + "'");
        }
        if (RESERVED.contains(schema.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("schema '" + schema + "' is a reserved word in PostgreSQL");
        }
        if (schema.startsWith("pg_")) {
            throw new IllegalArgumentException("schema '" + schema + "' is reserved for PostgreSQL (pg_ prefix)");
        }
        return schema;
    }
}

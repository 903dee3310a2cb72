package dev.locksmith.internal;

import dev.locksmith.TableSchema;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * The schema a repository renders locksmith's tables in, taken from the {@code DSLContext} it
 * was built with, and applied to the {@code DSLContext}s its callers pass in (which may carry no
 * mapping). Free when the schema is the default. <b>Internal: not API.</b>
 */
public final class SchemaMapping {

    private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]*");

    private final String schema;

    private SchemaMapping(String schema) {
        this.schema = schema;
    }

    /**
     * Returns {@code schema} if it can be rendered unquoted: a lower-case identifier of at most 63
     * bytes, not {@code pg_*} (the schema module's {@code SchemaName} adds reserved words).
     *
     * @throws IllegalArgumentException otherwise
     */
    public static String requireName(String schema) {
        Objects.requireNonNull(schema, "schema");
        if (!IDENTIFIER.matcher(schema).matches()
                || schema.getBytes(StandardCharsets.UTF_8).length > 63
                || schema.startsWith("pg_")) {
            throw new IllegalArgumentException("schema must be a lower-case unquoted identifier of at most 63 bytes "
                    + "([a-z_][a-z0-9_]*, not pg_*), was '" + schema + "'");
        }
        return schema;
    }

    /** The mapping of {@code dsl}'s settings. */
    public static SchemaMapping of(DSLContext dsl) {
        return new SchemaMapping(TableSchema.mappedSchema(dsl.settings()));
    }

    /** The schema, {@value TableSchema#DEFAULT} unless mapped. */
    public String schema() {
        return schema;
    }

    /** {@code tx}, rendering locksmith's tables in this schema (a derived context when it did not already). */
    public DSLContext on(DSLContext tx) {
        Objects.requireNonNull(tx, "tx");
        if (schema.equals(TableSchema.mappedSchema(tx.settings()))) {
            return tx;
        }
        return DSL.using(tx.configuration().derive(TableSchema.settings(tx.settings(), schema)));
    }
}

package dev.locksmith.internal;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.conf.MappedSchema;
import org.jooq.conf.RenderMapping;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * Which PostgreSQL schema locksmith's tables are rendered in. The generated tables belong to
 * {@value #DEFAULT}; a database migrated into another schema needs jOOQ to render that name
 * instead, through a {@link RenderMapping} from {@value #DEFAULT} to it. A repository takes the
 * mapping of the {@code DSLContext} it was built with and applies it to the {@code DSLContext}s
 * its callers pass in (which may carry no mapping). Free when the schema is the default.
 * <b>Internal: not API.</b>
 */
public final class SchemaMapping {

    /** The schema of the generated tables, and the default of the changelog. */
    public static final String DEFAULT = "locksmith";

    private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]*");

    private final String schema;

    private SchemaMapping(String schema) {
        this.schema = schema;
    }

    /**
     * Returns {@code schema} if it can be rendered unquoted: a lower-case identifier of at most 63
     * bytes, not {@code pg_*} (the schema module's {@code SchemaName} adds reserved words).
     *
     * @param schema the name
     * @return {@code schema}
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

    /**
     * The mapping of {@code dsl}'s settings.
     *
     * @param dsl a context
     * @return its mapping
     */
    public static SchemaMapping of(DSLContext dsl) {
        return new SchemaMapping(mappedSchema(dsl.settings()));
    }

    /**
     * The mapping to {@code schema}.
     *
     * @param schema a valid schema name
     * @return the mapping
     */
    public static SchemaMapping of(String schema) {
        return new SchemaMapping(requireName(schema));
    }

    /** {@return the schema, {@value #DEFAULT} unless mapped} */
    public String schema() {
        return schema;
    }

    /**
     * {@code tx}, rendering locksmith's tables in this schema (a derived context when it did not
     * already).
     *
     * @param tx a context
     * @return {@code tx} or a context derived from it
     */
    public DSLContext on(DSLContext tx) {
        Objects.requireNonNull(tx, "tx");
        if (schema.equals(mappedSchema(tx.settings()))) {
            return tx;
        }
        return DSL.using(tx.configuration().derive(settings(tx.settings(), schema)));
    }

    /**
     * A copy of {@code base} that renders locksmith's tables in {@code schema}, its other mappings
     * and settings unchanged.
     *
     * @param base the settings to start from; not modified
     * @param schema the schema; {@value #DEFAULT} removes any mapping of locksmith's schema
     * @return the new settings
     */
    public static Settings settings(Settings base, String schema) {
        Objects.requireNonNull(base, "base");
        String target = requireName(schema);
        Settings copy = (Settings) base.clone();
        RenderMapping mapping = copy.getRenderMapping() == null
                ? new RenderMapping()
                : (RenderMapping) copy.getRenderMapping().clone();
        mapping.getSchemata().removeIf(m -> DEFAULT.equals(m.getInput()));
        if (!target.equals(DEFAULT)) {
            mapping.getSchemata().add(new MappedSchema().withInput(DEFAULT).withOutput(target));
        }
        return copy.withRenderMapping(mapping);
    }

    /**
     * The schema {@code settings} render locksmith's tables in.
     *
     * @param settings a context's settings; null counts as no mapping
     * @return the output of the render mapping for {@value #DEFAULT}, or {@value #DEFAULT} itself
     */
    public static String mappedSchema(@Nullable Settings settings) {
        RenderMapping mapping = settings == null ? null : settings.getRenderMapping();
        if (mapping != null) {
            for (MappedSchema mapped : mapping.getSchemata()) {
                if (DEFAULT.equals(mapped.getInput()) && mapped.getOutput() != null) {
                    return mapped.getOutput();
                }
            }
        }
        return DEFAULT;
    }
}

package dev.locksmith.internal;

import dev.locksmith.TableSchema;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * The schema a repository renders locksmith's tables in, taken from the {@code DSLContext} it
 * was built with, and applied to the {@code DSLContext}s its callers pass in (which may carry no
 * mapping). Free when the schema is the default. <b>Internal: not API.</b>
 */
public final class SchemaMapping {

    private final String schema;

    private SchemaMapping(String schema) {
        this.schema = schema;
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
        java.util.Objects.requireNonNull(tx, "tx");
        if (schema.equals(TableSchema.mappedSchema(tx.settings()))) {
            return tx;
        }
        return DSL.using(tx.configuration().derive(TableSchema.settings(tx.settings(), schema)));
    }
}

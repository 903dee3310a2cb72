package dev.locksmith.spring;

import dev.locksmith.schema.AppliedChangeSet;
import dev.locksmith.schema.LocksmithSchema;
import java.util.List;
import javax.sql.DataSource;

/**
 * The locksmith schema, migrated when this bean is created
 * ({@code LocksmithSchema.migrate(dataSource, locksmith.schema.name, locksmith.schema.modules)}),
 * with {@code locksmith.schema.migrate=true} (the default). The repositories and workers depend on
 * it, and so does every bean that Spring Boot knows to use the database ({@code DSLContext},
 * {@code JdbcTemplate}, ...): it is registered as a database initializer, like Boot's own
 * Liquibase and Flyway beans, so nothing uses the database before the tables exist. Start-up
 * fails when the migration does.
 */
public final class LocksmithSchemaMigration {

    private final String schema;
    private final List<AppliedChangeSet> applied;

    LocksmithSchemaMigration(DataSource dataSource, LocksmithProperties.Schema properties) {
        this.schema = properties.name();
        this.applied = List.copyOf(LocksmithSchema.migrate(dataSource, properties.name(), properties.modules()));
    }

    /** {@return the schema migrated} */
    public String schema() {
        return schema;
    }

    /** {@return the change sets this start-up applied, in order; empty when the schema was up to date} */
    public List<AppliedChangeSet> appliedChangeSets() {
        return applied;
    }
}

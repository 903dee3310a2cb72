package dev.locksmith.schema;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import liquibase.Scope;
import liquibase.UpdateSummaryOutputEnum;
import liquibase.command.CommandScope;
import liquibase.command.core.RollbackCountCommandStep;
import liquibase.command.core.UpdateCommandStep;
import liquibase.command.core.helpers.DatabaseChangelogCommandStep;
import liquibase.command.core.helpers.ShowSummaryArgument;
import liquibase.command.core.helpers.DbUrlConnectionArgumentsCommandStep;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;
import liquibase.ui.LoggerUIService;

/**
 * Applies the locksmith schema with Liquibase, for services that migrate at start-up.
 *
 * <p>The changelog is a classpath resource at {@link #CHANGELOG}; deployment pipelines apply
 * the same file with the stock Liquibase CLI or Maven plugin (see the README). Applying it
 * twice is a no-op. Concurrent migrators are serialized twice over: by a PostgreSQL session
 * advisory lock taken here (which also covers the first run, when Liquibase's own lock table
 * does not exist yet and two migrators could race to create it) and by Liquibase's
 * {@code databasechangeloglock}.
 */
public final class LocksmithSchema {

    /** Classpath location of the master changelog. */
    public static final String CHANGELOG = "db/locksmith/changelog.xml";

    /**
     * Advisory lock key (single bigint form) held while migrating. Chosen once and fixed:
     * the first 8 bytes of SHA-256("locksmith.schema"), so unrelated applications are
     * unlikely to use the same key.
     */
    static final long MIGRATION_LOCK_KEY = 0x5a2c_6c3b_8d41_7e09L;

    private LocksmithSchema() {
    }

    /**
     * Brings the database behind {@code dataSource} up to date with {@link #CHANGELOG}.
     *
     * <p>Blocks while another migrator (in this or another process) holds the migration lock.
     * Uses one connection from the data source for the duration and restores its auto-commit
     * mode before returning it.
     *
     * @param dataSource where to migrate; its user needs CREATE on the target schema
     * @return the change sets this call applied, in execution order (empty when up to date)
     * @throws SchemaMigrationException when Liquibase or the database fails; what Liquibase
     *     applied before the failure stays applied (each change set is its own transaction)
     */
    public static List<AppliedChangeSet> migrate(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        return withMigrationLock(dataSource, connection -> {
            List<AppliedChangeSet> before = appliedChangeSets(connection);
            runLiquibase(connection, database -> new CommandScope(UpdateCommandStep.COMMAND_NAME)
                    .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                    .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, CHANGELOG)
                    .addArgumentValue(ShowSummaryArgument.SHOW_SUMMARY_OUTPUT, UpdateSummaryOutputEnum.LOG)
                    .execute());
            List<AppliedChangeSet> after = appliedChangeSets(connection);
            return List.copyOf(after.subList(before.size(), after.size()));
        });
    }

    /**
     * Rolls back the last {@code count} applied locksmith change sets, newest first. Meant for
     * tests and for an operator undoing a release; it drops tables and their data.
     *
     * @param count how many change sets to roll back; must be positive
     * @return the change sets that remain applied
     */
    public static List<AppliedChangeSet> rollback(DataSource dataSource, int count) {
        Objects.requireNonNull(dataSource, "dataSource");
        if (count <= 0) {
            throw new IllegalArgumentException("count must be positive, was " + count);
        }
        return withMigrationLock(dataSource, connection -> {
            runLiquibase(connection, database -> new CommandScope(RollbackCountCommandStep.COMMAND_NAME)
                    .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                    .addArgumentValue(DatabaseChangelogCommandStep.CHANGELOG_FILE_ARG, CHANGELOG)
                    .addArgumentValue(RollbackCountCommandStep.COUNT_ARG, count)
                    .execute());
            return appliedChangeSets(connection);
        });
    }

    /**
     * Lists the change sets recorded in Liquibase's {@code databasechangelog}, oldest first;
     * empty when the database was never migrated.
     */
    public static List<AppliedChangeSet> appliedChangeSets(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        try (Connection connection = dataSource.getConnection()) {
            return appliedChangeSets(connection);
        } catch (SQLException e) {
            throw new SchemaMigrationException("could not read databasechangelog", e);
        }
    }

    private static List<AppliedChangeSet> appliedChangeSets(Connection connection) throws SQLException {
        try (PreparedStatement exists = connection.prepareStatement(
                "SELECT to_regclass('databasechangelog') IS NOT NULL")) {
            try (ResultSet rs = exists.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    return List.of();
                }
            }
        }
        List<AppliedChangeSet> result = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement(
                "SELECT id, author, filename, dateexecuted FROM databasechangelog ORDER BY orderexecuted");
             ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
                result.add(new AppliedChangeSet(rs.getString(1), rs.getString(2), rs.getString(3),
                        rs.getTimestamp(4).toInstant()));
            }
        }
        return result;
    }

    private interface LiquibaseCommand {
        void run(Database database) throws Exception;
    }

    private static void runLiquibase(Connection connection, LiquibaseCommand command) throws Exception {
        Database database = DatabaseFactory.getInstance()
                .findCorrectDatabaseImplementation(new JdbcConnection(connection));
        Map<String, Object> scope = Map.of(
                Scope.Attr.resourceAccessor.name(),
                new ClassLoaderResourceAccessor(LocksmithSchema.class.getClassLoader()),
                // A library reports through logging, never on the caller's standard output.
                Scope.Attr.ui.name(), new LoggerUIService(),
                // No usage reporting from a library: the calling service did not opt in.
                "liquibase.analytics.enabled", Boolean.FALSE);
        Scope.child(scope, () -> command.run(database));
    }

    private interface LockedWork<T> {
        T run(Connection connection) throws Exception;
    }

    private static <T> T withMigrationLock(DataSource dataSource, LockedWork<T> work) {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(true);
            lock(connection, "SELECT pg_advisory_lock(?)");
            try {
                return work.run(connection);
            } finally {
                if (!connection.getAutoCommit()) {
                    connection.rollback();
                    connection.setAutoCommit(true);
                }
                lock(connection, "SELECT pg_advisory_unlock(?)");
                connection.setAutoCommit(autoCommit);
            }
        } catch (SchemaMigrationException e) {
            throw e;
        } catch (Exception e) {
            throw new SchemaMigrationException("locksmith schema migration failed: " + e.getMessage(), e);
        }
    }

    private static void lock(Connection connection, String sql) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setLong(1, MIGRATION_LOCK_KEY);
            statement.execute();
        }
    }
}

package dev.locksmith.schema;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import javax.sql.DataSource;
import liquibase.Scope;
import liquibase.UpdateSummaryOutputEnum;
import liquibase.changelog.ChangeLogParameters;
import liquibase.command.CommandScope;
import liquibase.command.core.RollbackCountCommandStep;
import liquibase.command.core.UpdateCommandStep;
import liquibase.command.core.ValidateCommandStep;
import liquibase.command.core.helpers.DatabaseChangelogCommandStep;
import liquibase.command.core.helpers.DbUrlConnectionArgumentsCommandStep;
import liquibase.command.core.helpers.ShowSummaryArgument;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;
import liquibase.ui.LoggerUIService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the locksmith schema with Liquibase, for services that migrate at start-up.
 *
 * <p>Every locksmith object lives in one PostgreSQL schema, {@value SchemaName#DEFAULT} unless
 * you choose another ({@link SchemaName}); nothing is created in your own schema. The schema is
 * made of {@linkplain SchemaModule modules} that can be applied alone. The changelogs are
 * classpath resources ({@link #CHANGELOG} includes every module); deployment pipelines apply the
 * same files with the stock Liquibase CLI or Maven plugin, passing the schema as the
 * {@value #SCHEMA_PARAMETER} changelog parameter (docs/schema.md). Liquibase's own tables
 * ({@code databasechangelog}, {@code databasechangeloglock}) stay where Liquibase keeps them by
 * default, the connection's default schema, and may be shared with your application's own
 * changelogs: every locksmith change set is recorded under a file name starting
 * {@code locksmith/}. Applying twice is a no-op.
 *
 * <p>Before any change set runs, each module checks that no object of the same name that
 * locksmith did not create exists in the target schema; if one does, nothing is applied and
 * the error names it. A failure after that (lost connection, missing privilege) leaves the change
 * sets applied so far in place: each is its own transaction, and DDL in PostgreSQL is
 * transactional, so no change set is ever half-applied; running the migration again continues
 * from there. Concurrent migrators are serialized twice over: by a PostgreSQL session
 * advisory lock taken here (which also covers the first run, when Liquibase's own lock table
 * does not exist yet and two migrators could race to create it) and by Liquibase's
 * {@code databasechangeloglock}.
 */
public final class LocksmithSchema {

    /** Classpath location of the master changelog (every module). */
    public static final String CHANGELOG = "db/locksmith/changelog.xml";

    /** The changelog parameter that names the schema; its default is {@value SchemaName#DEFAULT}. */
    public static final String SCHEMA_PARAMETER = "locksmith.schema";

    /**
     * Advisory lock key (single bigint form) held while migrating. Chosen once and fixed:
     * the first 8 bytes of SHA-256("locksmith.schema"), so unrelated applications are
     * unlikely to use the same key.
     */
    static final long MIGRATION_LOCK_KEY = 0x5a2c_6c3b_8d41_7e09L;

    private static final Logger LOG = LoggerFactory.getLogger(LocksmithSchema.class);
    private static final Slf4jLogService LIQUIBASE_LOG = new Slf4jLogService();

    private LocksmithSchema() {}

    /**
     * Brings the database behind {@code dataSource} up to date with every module, in the
     * {@value SchemaName#DEFAULT} schema.
     *
     * @param dataSource where to migrate; its user needs CREATE on the database (for the schema)
     *     or on the schema
     * @return the change sets this call applied, in execution order (empty when up to date)
     * @see #migrate(DataSource, String, Set)
     */
    public static List<AppliedChangeSet> migrate(DataSource dataSource) {
        return migrate(dataSource, SchemaName.DEFAULT, EnumSet.allOf(SchemaModule.class));
    }

    /**
     * Brings {@code modules} up to date in {@code schema}.
     *
     * <p>Blocks while another migrator (in this or another process) holds the migration lock.
     * Uses one connection from the data source for the duration and restores its auto-commit
     * mode before returning it. Every module's clash check runs before any change set.
     *
     * <p>Prints nothing: it logs one INFO line through SLF4J ({@code applied 31 change sets to
     * schema locksmith (modules: ...)}, 0 when up to date), and Liquibase's own log goes to SLF4J
     * one level quieter (its INFO at DEBUG, under the {@code liquibase} loggers).
     *
     * @param dataSource where to migrate; its user needs CREATE on the database (for the schema)
     *     or on the schema
     * @param schema where locksmith's objects live; validated by {@link SchemaName#require}
     *     before anything touches the database
     * @param modules the modules to apply, at least one
     * @return the change sets this call applied, in execution order (empty when up to date)
     * @throws SchemaMigrationException when a clash check fails (nothing applied), or Liquibase
     *     or the database fails (what was applied before stays applied)
     */
    public static List<AppliedChangeSet> migrate(DataSource dataSource, String schema, Set<SchemaModule> modules) {
        Objects.requireNonNull(dataSource, "dataSource");
        String target = SchemaName.require(schema);
        List<String> changelogs = changelogs(modules);
        return withMigrationLock(dataSource, connection -> {
            List<AppliedChangeSet> before = appliedChangeSets(connection);
            for (String changelog : changelogs) {
                // preconditions (the clash checks) are part of validation: all before any update
                runLiquibase(
                        connection,
                        target,
                        changelog,
                        database -> new CommandScope(ValidateCommandStep.COMMAND_NAME)
                                .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                                .addArgumentValue(DatabaseChangelogCommandStep.CHANGELOG_FILE_ARG, changelog));
            }
            for (String changelog : changelogs) {
                runLiquibase(
                        connection,
                        target,
                        changelog,
                        database -> new CommandScope(UpdateCommandStep.COMMAND_NAME)
                                .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                                .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, changelog)
                                .addArgumentValue(
                                        ShowSummaryArgument.SHOW_SUMMARY_OUTPUT, UpdateSummaryOutputEnum.LOG));
            }
            List<AppliedChangeSet> after = appliedChangeSets(connection);
            List<AppliedChangeSet> applied = List.copyOf(after.subList(before.size(), after.size()));
            LOG.info("applied {} change sets to schema {} (modules: {})", applied.size(), target, names(modules));
            return applied;
        });
    }

    private static String names(Set<SchemaModule> modules) {
        return String.join(
                ", ",
                EnumSet.copyOf(modules).stream()
                        .map(m -> m.name().toLowerCase(java.util.Locale.ROOT))
                        .toList());
    }

    /**
     * Rolls back the last {@code count} applied change sets of the whole changelog in the
     * {@value SchemaName#DEFAULT} schema, newest first.
     *
     * @param dataSource the database to roll back
     * @param count how many change sets to roll back; must be positive
     * @return the change sets that remain applied
     * @see #rollback(DataSource, String, int)
     */
    public static List<AppliedChangeSet> rollback(DataSource dataSource, int count) {
        return rollback(dataSource, SchemaName.DEFAULT, count);
    }

    /**
     * Rolls back the last {@code count} applied locksmith change sets, newest first. Meant for
     * tests and for an operator undoing a release; it drops tables and their data. The schema
     * itself is kept. On a database upgraded from 0.1.0 the tables that were moved are dropped
     * as well (their create change sets were marked as ran, and Liquibase rolls those back too).
     *
     * @param dataSource the database to roll back
     * @param schema the schema the changelog was applied to
     * @param count how many change sets to roll back; must be positive
     * @return the change sets that remain applied
     */
    public static List<AppliedChangeSet> rollback(DataSource dataSource, String schema, int count) {
        Objects.requireNonNull(dataSource, "dataSource");
        String target = SchemaName.require(schema);
        if (count <= 0) {
            throw new IllegalArgumentException("count must be positive, was " + count);
        }
        return withMigrationLock(dataSource, connection -> {
            int before = appliedChangeSets(connection).size();
            runLiquibase(
                    connection,
                    target,
                    CHANGELOG,
                    database -> new CommandScope(RollbackCountCommandStep.COMMAND_NAME)
                            .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                            .addArgumentValue(DatabaseChangelogCommandStep.CHANGELOG_FILE_ARG, CHANGELOG)
                            .addArgumentValue(RollbackCountCommandStep.COUNT_ARG, count));
            List<AppliedChangeSet> remaining = appliedChangeSets(connection);
            LOG.info(
                    "rolled back {} change sets in schema {} ({} remain applied)",
                    before - remaining.size(),
                    target,
                    remaining.size());
            return remaining;
        });
    }

    /** The changelogs for {@code modules}: the master for all of them, else each in enum order. */
    private static List<String> changelogs(Set<SchemaModule> modules) {
        Objects.requireNonNull(modules, "modules");
        if (modules.isEmpty()) {
            throw new IllegalArgumentException("modules must name at least one module");
        }
        EnumSet<SchemaModule> chosen = EnumSet.copyOf(modules);
        if (chosen.equals(EnumSet.allOf(SchemaModule.class))) {
            return List.of(CHANGELOG);
        }
        return chosen.stream().map(SchemaModule::changelog).toList();
    }

    /**
     * Lists the change sets recorded in Liquibase's {@code databasechangelog}, oldest first;
     * empty when the database was never migrated.
     *
     * @param dataSource the database to read; one connection is borrowed and returned
     * @return the applied change sets, oldest first
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
        try (PreparedStatement exists =
                connection.prepareStatement("SELECT to_regclass('databasechangelog') IS NOT NULL")) {
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
                result.add(new AppliedChangeSet(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getString(3),
                        rs.getTimestamp(4).toInstant()));
            }
        }
        return result;
    }

    private interface LiquibaseCommand {
        CommandScope command(Database database) throws Exception;
    }

    // UnusedVariable: changelog is redundant (each command sets its own changelog argument).
    // BooleanLiteral: Boolean.FALSE in a Map<String, Object> of scope values reads as intended.
    @SuppressWarnings({"UnusedVariable", "BooleanLiteral"})
    private static void runLiquibase(Connection connection, String schema, String changelog, LiquibaseCommand command)
            throws Exception {
        Slf4jLogService.readyRootScope();
        Map<String, Object> scope = Map.of(
                Scope.Attr.resourceAccessor.name(),
                new ClassLoaderResourceAccessor(LocksmithSchema.class.getClassLoader()),
                // A library reports through the application's logging, one level quieter than
                // Liquibase narrates, and never on standard output or error: Liquibase's log (by
                // default java.util.logging, whose console handler prints INFO to standard error)
                // goes to SLF4J, and what it shows a user (the update summary) goes to that log.
                Scope.Attr.logService.name(),
                LIQUIBASE_LOG,
                Scope.Attr.ui.name(),
                new LoggerUIService(),
                // No usage reporting from a library: the calling service did not opt in.
                "liquibase.analytics.enabled",
                Boolean.FALSE);
        Scope.child(scope, () -> {
            Database database =
                    DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(connection));
            ChangeLogParameters parameters = new ChangeLogParameters(database);
            parameters.set(SCHEMA_PARAMETER, schema);
            command.command(database)
                    .addArgumentValue(DatabaseChangelogCommandStep.CHANGELOG_PARAMETERS, parameters)
                    .execute();
        });
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

package dev.locksmith.compat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.compat.ForkedLiquibase.Route;
import dev.locksmith.compat.ForkedLiquibase.Run;
import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import java.util.List;
import java.util.stream.Collectors;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The locksmith changelog with every Liquibase version users run it with: the one Spring Boot
 * 3.4 manages, Spring Boot 3.5's, the project's own and 5.x (FSL), each as the stock command line
 * in its own JVM, against a real PostgreSQL obtained the shared way. Every test works in
 * databases of its own, dropped at the end.
 */
class LiquibaseCompatTest {

    /** The change sets of the master changelog; a new one must be counted here too. */
    static final int CHANGE_SETS = 41;

    private static final List<String> TABLES = List.of(
            "account_transfers",
            "accounts",
            "channel_account_leases",
            "channel_account_leases_slot0",
            "channel_account_leases_slot1",
            "channel_account_leases_slot2",
            "channel_account_leases_slot3",
            "channel_accounts",
            "deadlock_event",
            "job_concurrency_limits",
            "job_history",
            "job_history_default",
            "job_key_starts",
            "job_unique_keys",
            "jobs",
            "jobs_slot0",
            "jobs_slot1",
            "jobs_slot2",
            "jobs_slot3",
            "lock_wait_event",
            "schedules");

    private static PostgresServer server;
    private static ScratchDatabases databases;

    @BeforeAll
    static void startServer() {
        server = PostgresServer.start();
        databases = server.scratch("locksmith_lbcompat");
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    static List<LiquibaseDistribution> versions() {
        return LiquibaseDistribution.configured();
    }

    /**
     * Check 1, then check 2: {@code first} applies the whole changelog to an empty database (the
     * schema jar on the class path, as Spring Boot reads it); then every other version, through
     * the README's {@code --search-path} route, finds nothing to do: no validation or checksum
     * error, and neither the tracking rows nor any table change.
     */
    @ParameterizedTest(name = "migrated by Liquibase {0}, then updated by every other version")
    @MethodSource("versions")
    void everyVersionAppliesTheChangelogAndAnyOtherThenFindsNothingToDo(LiquibaseDistribution first) {
        ScratchDatabase database = databases.create("v" + first.version());

        ForkedLiquibase.update(first, Route.CLASSPATH, database).succeeded();

        assertThat(SchemaState.tables(database, "locksmith"))
                .as("tables in schema locksmith")
                .isEqualTo(TABLES);
        List<String> changeLog = SchemaState.changeLog(database);
        assertThat(changeLog)
                .as("databasechangelog")
                .hasSize(CHANGE_SETS)
                .allSatisfy(row -> assertThat(row).contains("| locksmith/").endsWith("| " + first.version()));
        List<String> shape = SchemaState.shape(database, "locksmith");

        SoftAssertions softly = new SoftAssertions();
        for (LiquibaseDistribution next : others(first)) {
            Run run = ForkedLiquibase.update(next, Route.SEARCH_PATH, database);
            softly.assertThat(run.exitCode())
                    .as(
                            "Liquibase %s on a database migrated by %s exited with %s:%n  %s%n%s",
                            next, first, run.exitCode(), run.command(), run.output())
                    .isZero();
            softly.assertThat(SchemaState.changeLog(database))
                    .as("databasechangelog after Liquibase %s on a database migrated by %s", next, first)
                    .isEqualTo(changeLog);
            softly.assertThat(SchemaState.shape(database, "locksmith"))
                    .as("schema locksmith after Liquibase %s on a database migrated by %s", next, first)
                    .isEqualTo(shape);
        }
        softly.assertAll();
        databases.drop(database);
    }

    /**
     * Check 3: the schema chosen the stock command line's way, a {@code -D} changelog parameter,
     * holds every table, and no {@code locksmith} schema is created.
     */
    @ParameterizedTest(name = "Liquibase {0} with -Dlocksmith.schema=custom_locks")
    @MethodSource("versions")
    void aChangelogParameterChoosesTheSchema(LiquibaseDistribution liquibase) {
        ScratchDatabase database = databases.create("custom_v" + liquibase.version());

        ForkedLiquibase.update(liquibase, Route.SEARCH_PATH, database, "-Dlocksmith.schema=custom_locks")
                .succeeded();

        assertThat(SchemaState.tables(database, "custom_locks"))
                .as("tables in schema custom_locks")
                .isEqualTo(TABLES);
        assertThat(SchemaState.schemaExists(database, "locksmith"))
                .as("schema locksmith exists")
                .isFalse();
        assertThat(SchemaState.changeLog(database)).as("databasechangelog").hasSize(CHANGE_SETS);
        databases.drop(database);
    }

    /**
     * Check 4: the README's deployment-pipeline command, as written there, with the Liquibase
     * the README names (the project's): {@code liquibase --search-path=<locksmith-schema jar>
     * --changelog-file=db/locksmith/changelog.xml --url=... --username=... --password=...
     * --analytics-enabled=false update}.
     */
    @Test
    void theReadmeCommandLineAppliesTheChangelog() {
        LiquibaseDistribution liquibase =
                LiquibaseDistribution.version(System.getProperty("locksmith.compat.readme-liquibase"));
        ScratchDatabase database = databases.create("readme");

        Run run = ForkedLiquibase.update(liquibase, Route.SEARCH_PATH, database).succeeded();

        assertThat(run.command())
                .contains(
                        "--search-path=",
                        "--changelog-file=db/locksmith/changelog.xml",
                        "--analytics-enabled=false update");
        assertThat(SchemaState.tables(database, "locksmith"))
                .as("tables in schema locksmith")
                .isEqualTo(TABLES);
        assertThat(SchemaState.changeLog(database)).as("databasechangelog").hasSize(CHANGE_SETS);
        databases.drop(database);
    }

    private static List<LiquibaseDistribution> others(LiquibaseDistribution first) {
        return versions().stream().filter(v -> !v.equals(first)).collect(Collectors.toList());
    }
}

package dev.locksmith.compat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.compat.ForkedLiquibase.Run;
import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code LocksmithSchema.migrate} with every Liquibase version a service may put beside it
 * (Spring Boot 3.4's, 3.5's, the project's, 5.x), each in its own JVM: it prints nothing on
 * standard output or error, logs exactly one INFO line per call with the number of change sets
 * applied (all of them, then 0), and Liquibase's own log reaches SLF4J at DEBUG, never above.
 */
class LocksmithSchemaLoggingTest {

    private static final String SUMMARY = "INFO dev.locksmith.schema.LocksmithSchema - applied %d change sets to "
            + "schema locksmith (modules: queue, pool, accounts, audit)";

    private static final Pattern LEVEL = Pattern.compile("(TRACE|DEBUG|INFO|WARN|ERROR) ");

    private static PostgresServer server;
    private static ScratchDatabases databases;

    @BeforeAll
    static void startServer() {
        server = PostgresServer.start();
        databases = server.scratch("locksmith_lblog");
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

    @ParameterizedTest(name = "LocksmithSchema.migrate with Liquibase {0}")
    @MethodSource("versions")
    void migratePrintsNothingAndLogsOneInfoLinePerCall(LiquibaseDistribution liquibase) throws IOException {
        ScratchDatabase database = databases.create("log_v" + liquibase.version());
        Path log = Files.createTempFile("slf4j-" + liquibase.version() + "-", ".log");
        try {
            Run run = ForkedLiquibase.migrateTwice(liquibase, database, log);

            assertThat(run.exitCode())
                    .as("exit code of %s, log:%n%s", run.command(), Files.readString(log))
                    .isZero();
            assertThat(run.output()).as("standard output and error").isEmpty();
            List<String> records = records(Files.readAllLines(log));
            assertThat(records.stream().filter(r -> !r.startsWith("DEBUG ") && !r.startsWith("TRACE ")))
                    .as("log records above DEBUG")
                    .containsExactly(SUMMARY.formatted(LiquibaseCompatTest.CHANGE_SETS), SUMMARY.formatted(0));
            assertThat(records).as("Liquibase's log, at DEBUG").anyMatch(r -> r.startsWith("DEBUG liquibase."));
            assertThat(SchemaState.changeLog(database)).hasSize(LiquibaseCompatTest.CHANGE_SETS);
        } finally {
            Files.deleteIfExists(log);
            databases.drop(database);
        }
    }

    /** The log's records: a line starting with a level begins one; others continue it (multi-line messages). */
    private static List<String> records(List<String> lines) {
        List<String> records = new ArrayList<>();
        for (String line : lines) {
            if (LEVEL.matcher(line).lookingAt() || records.isEmpty()) {
                records.add(line);
            } else {
                records.set(records.size() - 1, records.get(records.size() - 1) + "\n" + line);
            }
        }
        return records;
    }
}

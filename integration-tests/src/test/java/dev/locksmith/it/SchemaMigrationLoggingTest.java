package dev.locksmith.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.schema.AppliedChangeSet;
import dev.locksmith.schema.LocksmithSchema;
import dev.locksmith.schema.SchemaModule;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code LocksmithSchema} prints nothing and logs one INFO line per call. This module's SLF4J
 * binding (slf4j-simple, at INFO) writes to standard error as it is at each write, so capturing
 * both streams around a call captures SLF4J's output too: the summary line must be all there is.
 * (liquibase-compat checks the same with every supported Liquibase version, in forked JVMs.)
 */
class SchemaMigrationLoggingTest {

    private static final String SUMMARY =
            "INFO dev.locksmith.schema.LocksmithSchema - applied %d change sets to schema " + "%s (modules: %s)";

    /** What {@code work} printed: standard output must stay empty; standard error's lines, thread names removed. */
    private static List<String> printed(Runnable work) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream capturedOut = new ByteArrayOutputStream();
        ByteArrayOutputStream capturedErr = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(capturedOut, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(capturedErr, true, StandardCharsets.UTF_8));
            work.run();
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
        assertThat(capturedOut.toString(StandardCharsets.UTF_8))
                .as("standard output")
                .isEmpty();
        return capturedErr
                .toString(StandardCharsets.UTF_8)
                .lines()
                .map(l -> l.replaceFirst("^\\[[^\\]]*\\] ", ""))
                .toList();
    }

    @Test
    void migratePrintsNothingAndLogsOneInfoLineWithTheNumberOfChangeSetsApplied() {
        ScratchDatabase database = TestPostgres.freshEmpty("logging");
        try {
            assertThat(printed(() -> LocksmithSchema.migrate(database.dataSource())))
                    .containsExactly(SUMMARY.formatted(
                            SchemaMigrationTest.CHANGE_SETS, "locksmith", "queue, pool, accounts, audit"));
            assertThat(printed(() -> LocksmithSchema.migrate(database.dataSource())))
                    .containsExactly(SUMMARY.formatted(0, "locksmith", "queue, pool, accounts, audit"));
            assertThat(printed(() -> LocksmithSchema.rollback(database.dataSource(), 2)))
                    .containsExactly(
                            "INFO dev.locksmith.schema.LocksmithSchema - rolled back 2 change sets in schema locksmith "
                                    + "(" + (SchemaMigrationTest.CHANGE_SETS - 2) + " remain applied)");
        } finally {
            TestPostgres.drop(database);
        }
    }

    @Test
    void theLineNamesTheSchemaAndTheModules() {
        ScratchDatabase database = TestPostgres.freshEmpty("logging_modules");
        try {
            List<AppliedChangeSet> applied = new ArrayList<>();
            assertThat(printed(() -> applied.addAll(LocksmithSchema.migrate(
                            database.dataSource(), "other_locks", EnumSet.of(SchemaModule.AUDIT, SchemaModule.QUEUE)))))
                    .containsExactly(SUMMARY.formatted(applied.size(), "other_locks", "queue, audit"));
            assertThat(applied).isNotEmpty();
        } finally {
            TestPostgres.drop(database);
        }
    }

    /** The NOTICE level migrate raises for itself is put back before the pooled connection is. */
    @Test
    void thePooledConnectionGoesBackWithItsOwnMessageLevel() throws Exception {
        ScratchDatabase database = TestPostgres.freshEmpty("logging_level");
        try (HikariDataSource one = TestPostgres.pool(database, 1)) {
            LocksmithSchema.migrate(one);
            try (Connection connection = one.getConnection();
                    Statement statement = connection.createStatement();
                    ResultSet rs = statement.executeQuery("SELECT current_setting('client_min_messages')")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("notice");
            }
        } finally {
            TestPostgres.drop(database);
        }
    }
}

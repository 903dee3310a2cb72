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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import liquibase.Scope;
import liquibase.SingletonScopeManager;
import org.junit.jupiter.api.Test;

/**
 * {@code LocksmithSchema} prints nothing and logs one INFO line per call. This module's SLF4J
 * binding (Logback, at INFO, on standard error) writes to standard error as it is at each write,
 * so capturing both streams around a call captures SLF4J's output too: the summary line must be
 * all there is. java.util.logging's console handler does not: it holds the standard error of the
 * JVM's start, so a record published to JUL's root handlers never reaches the captured stream, and
 * those handlers are watched apart, with the {@code liquibase} loggers open at every level while
 * the call runs (Liquibase's default log service is JUL). (liquibase-compat checks the same with
 * every supported Liquibase version, in forked JVMs.)
 */
class SchemaMigrationLoggingTest {

    private static final String SUMMARY =
            "INFO dev.locksmith.schema.LocksmithSchema - applied %d change sets to schema " + "%s (modules: %s)";

    /**
     * What {@code work} printed: standard output must stay empty, and nothing may reach
     * java.util.logging's root handlers; standard error's lines, thread names removed.
     */
    private static List<String> printed(Runnable work) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream capturedOut = new ByteArrayOutputStream();
        ByteArrayOutputStream capturedErr = new ByteArrayOutputStream();
        List<String> julRecords = new CopyOnWriteArrayList<>();
        Handler jul = new Handler() {
            @Override
            public void publish(LogRecord record) {
                julRecords.add(record.getLevel() + " " + record.getLoggerName() + " - " + record.getMessage());
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        jul.setLevel(Level.ALL);
        Logger root = LogManager.getLogManager().getLogger("");
        Logger liquibase = Logger.getLogger("liquibase");
        Level liquibaseLevel = liquibase.getLevel();
        try {
            root.addHandler(jul);
            liquibase.setLevel(Level.ALL);
            System.setOut(new PrintStream(capturedOut, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(capturedErr, true, StandardCharsets.UTF_8));
            work.run();
        } finally {
            System.setOut(out);
            System.setErr(err);
            liquibase.setLevel(liquibaseLevel);
            root.removeHandler(jul);
        }
        assertThat(capturedOut.toString(StandardCharsets.UTF_8))
                .as("standard output")
                .isEmpty();
        assertThat(julRecords).as("records published to java.util.logging").isEmpty();
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

    /**
     * Liquibase builds a root scope on a thread's first call, before any scope of the caller's
     * own: it must not narrate that through java.util.logging either. The call runs on a thread
     * whose Liquibase has no scope yet (a fresh scope manager), however many calls this JVM made.
     */
    @Test
    void aThreadsFirstCallPublishesNothingToJavaUtilLoggingEither() throws Exception {
        ScratchDatabase database = TestPostgres.freshEmpty("logging_first");
        try {
            List<String> lines = new CopyOnWriteArrayList<>();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread first = new Thread(() -> {
                try {
                    Scope.setScopeManager(new SingletonScopeManager());
                    lines.addAll(printed(() -> LocksmithSchema.migrate(database.dataSource())));
                } catch (Throwable e) {
                    failed.set(e);
                }
            });
            first.start();
            first.join();
            if (failed.get() != null) {
                throw new AssertionError(failed.get());
            }
            assertThat(lines)
                    .containsExactly(SUMMARY.formatted(
                            SchemaMigrationTest.CHANGE_SETS, "locksmith", "queue, pool, accounts, audit"));
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

package dev.locksmith.it.schedules;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.Occurrences;
import dev.locksmith.it.support.TestPostgres;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two JVMs in one test: a second JVM ({@link SchedulerProcess}, started with this test's class
 * path) and two scheduler threads here tick the same database through one minute of simulated
 * time, each at every one of the 240 steps, racing freely within each step. Each of the 613
 * occurrences is enqueued once.
 */
class ScheduleTwoJvmsTest extends DatabaseTest {

    private static final int IN_PROCESS = 2;
    private static final long TIMEOUT_SECONDS = 120;

    @TempDir
    Path dir;

    @Test
    void aSecondJvmAndTwoThreadsEnqueueEachOccurrenceOnce() throws Exception {
        Occurrences.register(dsl);
        dsl.execute("DROP TABLE IF EXISTS sim_clock, sim_progress");
        dsl.execute("CREATE TABLE sim_clock (step int NOT NULL, sim_now timestamptz NOT NULL, done boolean NOT NULL)");
        dsl.execute("CREATE TABLE sim_progress (scheduler text PRIMARY KEY, step int NOT NULL, enqueued int NOT NULL)");
        dsl.execute("INSERT INTO sim_clock VALUES (0, {0}, false)", DSL.val(at(0)));

        Path log = dir.resolve("second-jvm.log");
        Process second = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        SchedulerProcess.class.getName(),
                        database.jdbcUrl(),
                        database.user(),
                        database.password() == null ? "" : database.password(),
                        "second-jvm")
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        ExecutorService threads = Executors.newFixedThreadPool(IN_PROCESS);
        List<HikariDataSource> pools = new ArrayList<>();
        try {
            List<Future<Integer>> inProcess = new ArrayList<>();
            for (int i = 0; i < IN_PROCESS; i++) {
                HikariDataSource own = TestPostgres.pool(database, 2);
                pools.add(own);
                String name = "thread-" + i;
                inProcess.add(
                        threads.submit(() -> SchedulerProcess.run(DSL.using(own, SQLDialect.POSTGRES), name, 300)));
            }
            awaitOrFail(() -> dsl.fetchCount(DSL.table("sim_progress")) == IN_PROCESS + 1, second, log);

            for (int step = 1; step <= Occurrences.STEPS; step++) {
                dsl.execute("UPDATE sim_clock SET step = {0}, sim_now = {1}", DSL.val(step), DSL.val(at(step)));
                int published = step;
                awaitOrFail(
                        () -> published
                                == dsl.fetchValue(DSL.select(DSL.min(DSL.field("step", Integer.class)))
                                        .from(DSL.table("sim_progress"))),
                        second,
                        log);
            }
            dsl.execute("UPDATE sim_clock SET done = true");

            assertThat(second.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS))
                    .as("second JVM finished; its output:%n%s", output(log))
                    .isTrue();
            assertThat(second.exitValue())
                    .as("second JVM's exit; its output:%n%s", output(log))
                    .isZero();
            int enqueuedHere = 0;
            for (Future<Integer> f : inProcess) {
                enqueuedHere += f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            }

            Map<String, Integer> perScheduler = dsl.select(
                            DSL.field("scheduler", String.class), DSL.field("enqueued", Integer.class))
                    .from(DSL.table("sim_progress"))
                    .fetchMap(DSL.field("scheduler", String.class), DSL.field("enqueued", Integer.class));
            System.out.printf("schedules across two JVMs: enqueued per scheduler %s%n", perScheduler);
            assertThat(perScheduler).containsOnlyKeys("thread-0", "thread-1", "second-jvm");
            assertThat(perScheduler.values().stream()
                            .mapToInt(Integer::intValue)
                            .sum())
                    .isEqualTo(613);
            assertThat(enqueuedHere + perScheduler.get("second-jvm")).isEqualTo(613);
            List<String> keys = dsl.select(JOBS.UNIQUE_KEY).from(JOBS).fetch(JOBS.UNIQUE_KEY);
            assertThat(keys).hasSize(613).doesNotHaveDuplicates();
            assertThat(keys).containsExactlyInAnyOrderElementsOf(Occurrences.expectedKeys());
        } finally {
            second.destroyForcibly();
            threads.shutdownNow();
            threads.awaitTermination(30, TimeUnit.SECONDS);
            pools.forEach(HikariDataSource::close);
        }
    }

    private static OffsetDateTime at(int step) {
        return OffsetDateTime.ofInstant(Occurrences.at(step), ZoneOffset.UTC);
    }

    /** Waits for {@code condition}, polling, for at most the timeout; fails early if the second JVM died. */
    private static void awaitOrFail(BooleanSupplier condition, Process second, Path log) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (!condition.getAsBoolean()) {
            if (!second.isAlive()) {
                throw new AssertionError("second JVM exited with " + second.exitValue() + ":\n" + output(log));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "schedulers did not catch up within " + TIMEOUT_SECONDS + " s; second JVM:\n" + output(log));
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private static String output(Path log) throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "(none)";
    }
}

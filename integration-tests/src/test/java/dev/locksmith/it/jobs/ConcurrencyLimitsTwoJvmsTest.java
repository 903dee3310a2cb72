package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/**
 * Two JVMs of 8 worker threads each (this one and a {@link LimitedWorkerProcess}) drain 20 keys
 * with limits 1 to 5 while their workers' connections are killed at random, every 150 ms: every
 * handler run is recorded with its start and end by the database's clock, on connections that are
 * never killed, and for no key does the most runs in progress at one instant exceed its limit;
 * every job ends done.
 */
class ConcurrencyLimitsTwoJvmsTest extends DatabaseTest {

    static final String QUEUE = "limited-2jvm";
    static final int KEYS = 20;
    static final int PER_KEY = 30;

    @Override
    protected int poolSize() {
        return 12;
    }

    @Test
    void twoJvmsWithKilledConnectionsNeverRunMoreJobsOfAKeyThanItsLimit() throws Exception {
        dsl.execute(
                "CREATE TABLE limit_runs (id bigserial PRIMARY KEY, job_id bigint NOT NULL, key text NOT NULL, jvm bigint NOT NULL, "
                        + "started_at timestamptz NOT NULL DEFAULT clock_timestamp(), ended_at timestamptz)");
        JobQueue queue = new JobQueue(dsl);
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < PER_KEY; i++) {
            for (int k = 0; k < KEYS; k++) {
                jobs.add(NewJob.builder(QUEUE, "work")
                        .concurrencyKey("k" + k)
                        .maxAttempts(1000)
                        .build());
            }
        }
        queue.enqueueAll(dsl, jobs);
        for (int k = 0; k < KEYS; k++) {
            queue.concurrencyLimits().set(dsl, QUEUE, "k" + k, ConcurrencyLimitsTest.limitOf(k));
        }
        String[] args = {
            database.jdbcUrl(), database.user(), database.password() == null ? "" : database.password(), QUEUE
        };
        Process second = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        LimitedWorkerProcess.class.getName(),
                        args[0],
                        args[1],
                        args[2],
                        args[3])
                .redirectErrorStream(true)
                .start();
        int killed = 0;
        try (HikariDataSource workerPool =
                        LimitedWorkerProcess.pool(args, LimitedWorkerProcess.WORKER_APPLICATION, 12);
                HikariDataSource recorderPool =
                        LimitedWorkerProcess.pool(args, LimitedWorkerProcess.RECORDER_APPLICATION, 10)) {
            awaitStarted(second);
            DSLContext recorder = DSL.using(recorderPool, SQLDialect.POSTGRES);
            try (JobWorker worker =
                    LimitedWorkerProcess.worker(workerPool, QUEUE, recorder, 8).start()) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
                while (dsl.fetchCount(JOBS, JOBS.QUEUE.eq(QUEUE)) > 0) {
                    assertThat(System.nanoTime()).as("drained within 240 s").isLessThan(deadline);
                    killed += killOneWorkerConnection();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(150));
                }
            }
        } finally {
            second.destroyForcibly();
            assertThat(second.waitFor(60, TimeUnit.SECONDS))
                    .as("second JVM gone")
                    .isTrue();
        }
        System.out.printf(
                "two JVMs: %d runs of %d jobs, %d worker connections killed%n",
                number("SELECT count(*) FROM limit_runs"), KEYS * PER_KEY, killed);
        assertThat(killed).as("connections killed during the run").isPositive();
        assertThat(number("SELECT count(DISTINCT job_id) FROM limit_runs WHERE ended_at IS NOT NULL"))
                .as("every job ran")
                .isEqualTo((long) KEYS * PER_KEY);
        assertThat(number("SELECT count(*) FROM limit_runs WHERE ended_at IS NULL"))
                .as("every run's end recorded")
                .isZero();
        Map<String, Integer> most = mostInProgress();
        for (int k = 0; k < KEYS; k++) {
            assertThat(most.get("k" + k))
                    .as("most runs of k%d at once", k)
                    .isBetween(1, ConcurrencyLimitsTest.limitOf(k));
        }
        assertThat(most.values().stream().mapToInt(Integer::intValue).max().orElse(0))
                .isGreaterThan(1);
        assertThat(number("SELECT count(DISTINCT jvm) FROM limit_runs"))
                .as("both JVMs ran jobs")
                .isEqualTo(2L);
    }

    private long number(String sql) {
        return ((Number) dsl.fetchValue(sql)).longValue();
    }

    /** Per key, the most runs in progress at one instant: a sweep over starts (+1) and ends (-1), ends first. */
    private Map<String, Integer> mostInProgress() {
        return dsl.fetch("SELECT key, max(running)::int FROM ("
                        + "SELECT key, sum(d) OVER (PARTITION BY key ORDER BY at, d ROWS UNBOUNDED PRECEDING) AS running "
                        + "FROM (SELECT key, started_at AS at, 1 AS d FROM limit_runs "
                        + "UNION ALL SELECT key, ended_at, -1 FROM limit_runs) e) s GROUP BY key")
                .intoMap(r -> r.get(0, String.class), r -> r.get(1, Integer.class));
    }

    /** Terminates one of the two JVMs' worker connections, if any is open; returns how many (0 or 1). */
    private int killOneWorkerConnection() {
        List<Integer> pids = dsl
                .fetchValues(
                        "SELECT pid FROM pg_stat_activity WHERE application_name = ? AND datname = current_database()",
                        LimitedWorkerProcess.WORKER_APPLICATION)
                .stream()
                .map(v -> ((Number) v).intValue())
                .toList();
        if (pids.isEmpty()) {
            return 0;
        }
        int pid = pids.get(ThreadLocalRandom.current().nextInt(pids.size()));
        return Boolean.TRUE.equals(dsl.fetchValue("SELECT pg_terminate_backend(?)", pid)) ? 1 : 0;
    }

    private static void awaitStarted(Process process) throws Exception {
        BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null) {
            if (line.equals("STARTED")) {
                Thread drain = new Thread(() -> {
                    try {
                        while (out.readLine() != null) {
                            // keep the pipe from filling
                        }
                    } catch (java.io.IOException e) {
                        // the process is gone
                    }
                });
                drain.setDaemon(true);
                drain.start();
                return;
            }
        }
        throw new AssertionError("the second JVM ended before it started its worker");
    }
}

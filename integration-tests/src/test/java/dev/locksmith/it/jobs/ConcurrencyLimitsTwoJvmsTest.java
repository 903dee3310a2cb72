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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntUnaryOperator;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/**
 * Two JVMs of 8 worker threads each (this one and a {@link LimitedWorkerProcess}) drain 20 keys
 * while their workers' connections are killed at random, every 150 ms: every handler run is
 * recorded with its claim's lower bound, its start and its end by the database's clock, on
 * connections that are never killed. With concurrency limits 1 to 5, for no key does the most runs
 * in progress at one instant exceed its limit; with rates of 2 to 5 starts a second, no second
 * holds more of a key's starts than its rate (and without the rates the same check finds seconds
 * that do); every job ends done.
 */
class ConcurrencyLimitsTwoJvmsTest extends DatabaseTest {

    static final String QUEUE = "limited-2jvm";
    static final int KEYS = 20;
    static final int PER_KEY = 30;
    static final String RATED_QUEUE = "rated-2jvm";
    static final int RATED_PER_KEY = 10;

    @Override
    protected int poolSize() {
        return 12;
    }

    @Test
    void twoJvmsWithKilledConnectionsNeverRunMoreJobsOfAKeyThanItsLimit() throws Exception {
        dsl.execute(LimitedWorkerProcess.RUNS_TABLE);
        JobQueue queue = new JobQueue(dsl);
        enqueue(queue, QUEUE, PER_KEY);
        for (int k = 0; k < KEYS; k++) {
            queue.concurrencyLimits().set(dsl, QUEUE, "k" + k, ConcurrencyLimitsTest.limitOf(k));
        }
        assertEveryJobRanInBothJvms("concurrency limits", drainInTwoJvmsKillingConnections(QUEUE), KEYS * PER_KEY);
        assertEachKeyWithin(mostInProgress(), ConcurrencyLimitsTest::limitOf, "most runs at once");
    }

    /**
     * Each key's figure is between 1 and its bound, and some key's is above 1: the figure can
     * count what the bounds allow.
     */
    private static void assertEachKeyWithin(Map<String, Integer> most, IntUnaryOperator bound, String what) {
        for (int k = 0; k < KEYS; k++) {
            assertThat(most.get("k" + k)).as("%s of k%d", what, k).isBetween(1, bound.applyAsInt(k));
        }
        assertThat(most.values().stream().mapToInt(Integer::intValue).max().orElse(0))
                .as("%s of the busiest key", what)
                .isGreaterThan(1);
    }

    /** Key {@code k3} may start 2 + 3 % 4 = 5 jobs a second, and so on: rates 2 to 5 per second. */
    static int rateOf(int key) {
        return 2 + key % 4;
    }

    @Test
    void twoJvmsWithKilledConnectionsNeverStartMoreJobsOfAKeyInASecondThanItsRate() throws Exception {
        dsl.execute(LimitedWorkerProcess.RUNS_TABLE);
        JobQueue queue = new JobQueue(dsl);
        enqueue(queue, RATED_QUEUE, RATED_PER_KEY);
        for (int k = 0; k < KEYS; k++) {
            queue.rateLimits().set(dsl, RATED_QUEUE, "k" + k, rateOf(k), Duration.ofSeconds(1));
        }
        assertEveryJobRanInBothJvms("rate limits", drainInTwoJvmsKillingConnections(RATED_QUEUE), KEYS * RATED_PER_KEY);
        assertEachKeyWithin(mostStartsInASecond(), ConcurrencyLimitsTwoJvmsTest::rateOf, "most starts within a second");

        // the same check over the same jobs drained without rates finds windows over them
        dsl.execute("TRUNCATE limit_runs");
        // key by key (a key's jobs claimed one after another): a second holds many of one key's starts
        List<NewJob> unratedJobs = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            for (int i = 0; i < RATED_PER_KEY; i++) {
                unratedJobs.add(NewJob.builder("unrated-2jvm", "work")
                        .concurrencyKey("k" + k)
                        .build());
            }
        }
        queue.enqueueAll(dsl, unratedJobs);
        try (HikariDataSource recorderPool =
                        LimitedWorkerProcess.pool(connectionArgs(), LimitedWorkerProcess.RECORDER_APPLICATION, 10);
                JobWorker worker = LimitedWorkerProcess.worker(
                                pool, "unrated-2jvm", DSL.using(recorderPool, SQLDialect.POSTGRES), 8)
                        .start()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (dsl.fetchCount(JOBS, JOBS.QUEUE.eq("unrated-2jvm")) > 0) {
                assertThat(System.nanoTime()).as("drained within 120 s").isLessThan(deadline);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
        }
        Map<String, Integer> unrated = mostStartsInASecond();
        int over = 0;
        for (int k = 0; k < KEYS; k++) {
            if (unrated.getOrDefault("k" + k, 0) > rateOf(k)) {
                over++;
            }
        }
        assertThat(over).as("keys over their rate without it").isPositive();
    }

    private String[] connectionArgs() {
        return new String[] {database.jdbcUrl(), database.user(), database.password() == null ? "" : database.password()
        };
    }

    private void enqueue(JobQueue queue, String name, int perKey) {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < perKey; i++) {
            for (int k = 0; k < KEYS; k++) {
                jobs.add(NewJob.builder(name, "work")
                        .concurrencyKey("k" + k)
                        .maxAttempts(1000)
                        .build());
            }
        }
        queue.enqueueAll(dsl, jobs);
    }

    /**
     * Starts the second JVM and a worker of 8 threads here on {@code queue}, kills one of their
     * connections every 150 ms until the queue is empty (at most 240 s), and stops both.
     *
     * @return how many connections were killed
     */
    private int drainInTwoJvmsKillingConnections(String queue) throws Exception {
        String[] args = {database.jdbcUrl(), database.user(), connectionArgs()[2], queue};
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
                    LimitedWorkerProcess.worker(workerPool, queue, recorder, 8).start()) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
                while (dsl.fetchCount(JOBS, JOBS.QUEUE.eq(queue)) > 0) {
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
        return killed;
    }

    /** Prints the run's counts, then checks that connections were killed and every job ran, in both JVMs. */
    private void assertEveryJobRanInBothJvms(String what, int killed, int jobs) {
        System.out.printf(
                "two JVMs, %s: %d runs of %d jobs, %d worker connections killed%n",
                what, number("SELECT count(*) FROM limit_runs"), jobs, killed);
        assertThat(killed).as("connections killed during the run").isPositive();
        assertThat(number("SELECT count(DISTINCT job_id) FROM limit_runs WHERE ended_at IS NOT NULL"))
                .as("every job ran")
                .isEqualTo((long) jobs);
        assertThat(number("SELECT count(*) FROM limit_runs WHERE ended_at IS NULL"))
                .as("every run's end recorded")
                .isZero();
        assertThat(number("SELECT count(DISTINCT jvm) FROM limit_runs"))
                .as("both JVMs ran jobs")
                .isEqualTo(2L);
    }

    /**
     * Per key, the most runs whose claims surely fell within one second: a claim's start lies
     * between {@code claimed_from} (its transaction's start) and the handler's start, so a run
     * whose both lie in [a, a + 1 s) started in that window. The most over every window begins at
     * some run's {@code claimed_from}. What the rate allows bounds it; it is no proof of a short
     * wait between claim and handler.
     */
    private Map<String, Integer> mostStartsInASecond() {
        return dsl.fetch("SELECT a.key, max((SELECT count(*) FROM limit_runs b WHERE b.key = a.key "
                        + "AND b.claimed_from >= a.claimed_from "
                        + "AND b.started_at < a.claimed_from + interval '1 second'))::int "
                        + "FROM limit_runs a GROUP BY a.key")
                .intoMap(r -> r.get(0, String.class), r -> r.get(1, Integer.class));
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

package dev.locksmith.it.jobs;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Backoff;
import dev.locksmith.Locksmith;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobWorker;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * The second JVM of {@link ConcurrencyLimitsTwoJvmsTest}: a {@code JobWorker} of 8 threads on the
 * limited (or rate-limited) queue, whose handler records its run ({@link #run}) until the parent
 * destroys it.
 * Arguments: JDBC URL, user, password, queue.
 */
public final class LimitedWorkerProcess {

    /** The worker's connections' application name: the ones the test kills. */
    static final String WORKER_APPLICATION = "limited-worker";
    /** The recorder's connections' application name: never killed. */
    static final String RECORDER_APPLICATION = "limited-recorder";

    /** The workers' lease: a job's claim began its lease this long before the job's {@code lockedUntil}. */
    static final Duration LEASE = Duration.ofSeconds(2);

    /**
     * The runs: the job, its key, the JVM, when its claim's transaction began (the lease's end less
     * the lease: no later than the claim), and the handler's start and end, by the database's clock.
     */
    static final String RUNS_TABLE =
            "DROP TABLE IF EXISTS limit_runs; CREATE TABLE limit_runs (id bigserial PRIMARY KEY, job_id bigint NOT NULL, "
                    + "key text NOT NULL, jvm bigint NOT NULL, claimed_from timestamptz NOT NULL, "
                    + "started_at timestamptz NOT NULL DEFAULT clock_timestamp(), ended_at timestamptz)";

    private LimitedWorkerProcess() {}

    public static void main(String[] args) throws Exception {
        try (HikariDataSource workerPool = pool(args, WORKER_APPLICATION, 12);
                HikariDataSource recorderPool = pool(args, RECORDER_APPLICATION, 10)) {
            DSLContext recorder = DSL.using(recorderPool, SQLDialect.POSTGRES);
            try (JobWorker worker = worker(workerPool, args[3], recorder, 8).start()) {
                System.out.println("STARTED");
                new CountDownLatch(1).await();
            }
        }
    }

    static HikariDataSource pool(String[] args, String application, int size) {
        HikariConfig config = new HikariConfig();
        // the scratch database's URL names an application of its own, which would win over ours
        config.setJdbcUrl(args[0].replaceAll("([?&])ApplicationName=[^&]*&?", "$1"));
        config.setUsername(args[1]);
        if (!args[2].isEmpty()) {
            config.setPassword(args[2]);
        }
        config.setMaximumPoolSize(size);
        config.addDataSourceProperty("ApplicationName", application);
        return new HikariDataSource(config);
    }

    /** A worker whose jobs, retried within milliseconds, are recorded by {@code recorder}. */
    static JobWorker worker(HikariDataSource pool, String queue, DSLContext recorder, int threads) {
        JobQueue jobs = new JobQueue(
                Locksmith.of(pool),
                JobQueueConfig.builder()
                        .retryBackoff(new Backoff(Duration.ofMillis(5), Duration.ofMillis(20), 2.0, 0.0))
                        .build());
        return JobWorker.builder(
                        jobs,
                        queue,
                        (job, tx) -> run(
                                recorder,
                                tx,
                                job.id(),
                                job.concurrencyKey(),
                                Objects.requireNonNull(job.lockedUntil()).minus(LEASE)))
                .threads(threads)
                // no job claimed ahead of a free thread: a handler starts as its job is claimed
                .prefetch(0)
                .lease(LEASE)
                .rescueInterval(Duration.ofMillis(500))
                .pollInterval(Duration.ofMillis(20))
                .build();
    }

    /**
     * A handler's run, recorded in {@code limit_runs} with this JVM's process id on the recorder's own connections (never
     * killed): its start, then a few milliseconds of work on the job's connection, then its end,
     * both by the database's clock, so that the runs of two JVMs are on one clock.
     */
    static void run(DSLContext recorder, DSLContext tx, long jobId, String key, OffsetDateTime claimedFrom) {
        long run = ((Number) recorder.fetchValue(
                        "INSERT INTO limit_runs (job_id, key, jvm, claimed_from) VALUES (?, ?, ?, CAST(? AS timestamptz)) RETURNING id",
                        jobId,
                        key,
                        ProcessHandle.current().pid(),
                        claimedFrom))
                .longValue();
        try {
            tx.execute("SELECT pg_sleep(0.004)");
        } finally {
            recorder.execute("UPDATE limit_runs SET ended_at = clock_timestamp() WHERE id = ?", run);
        }
    }
}

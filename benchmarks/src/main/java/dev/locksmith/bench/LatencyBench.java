package dev.locksmith.bench;

import static dev.locksmith.codegen.Tables.JOBS;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.PoolingMode;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.WakeUp;
import dev.locksmith.jobs.Worker;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.provisioning.ScratchDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.SQLDialect;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * {@code bench latency}: end-to-end pick-up latency, from the producer's commit to the handler's
 * start, for the ways a worker can be woken ({@link Variant}), beside graphile-worker's in the
 * same run when it is installed ({@link GraphileWorkerPeer}). Every variant of a cell runs once
 * per round, the variants taking turns at going first, so that the machine's drift falls on all
 * of them; figures are medians over the rounds. The {@code job-worker} and {@code transactional}
 * workers run in the producers' JVM, which wakes them in-process as its enqueues commit; the
 * other-JVM, polling and PgBouncer variants run their worker in a JVM of its own
 * ({@link OtherJvmWorker}), woken only by {@code NOTIFY} or by its poll, as by producers in
 * another service.
 */
public final class LatencyBench {

    /** How workers are woken, and through what. */
    public enum Variant {
        /** {@code JobWorker} defaults in the producers' JVM: woken in-process, and by LISTEN. */
        JOB_WORKER("job-worker"),
        /** {@code TransactionalWorker} defaults. */
        TRANSACTIONAL("transactional"),
        /**
         * {@code JobWorker} defaults in a JVM of its own ({@link OtherJvmWorker}): woken only by
         * {@code NOTIFY}, as a worker is by producers in another service.
         */
        OTHER_JVM("job-worker-other-jvm"),
        /** {@code TransactionalWorker} defaults in a JVM of its own. */
        TRANSACTIONAL_OTHER_JVM("transactional-other-jvm"),
        /**
         * {@code JobWorker} in the producers' JVM with the NOTIFY inside the producer's
         * transaction (the wake-up before issue 33): woken by LISTEN alone.
         */
        IN_TRANSACTION("in-transaction"),
        /**
         * {@code JobWorker} in a JVM of its own, the NOTIFY inside the producer's transaction: as
         * graphile-worker is woken, so that the cost of the separate NOTIFY can be told from the
         * cost of the other JVM.
         */
        IN_TRANSACTION_OTHER_JVM("in-transaction-other-jvm"),
        /** {@code JobWorker} without LISTEN: the adaptive poll. */
        POLL("poll"),
        /** {@code JobWorker} without LISTEN, polling every second (the poll before issue 33). */
        FIXED_POLL("fixed-poll"),
        /** Producers and worker through PgBouncer (transaction mode), the adaptive poll. */
        PGBOUNCER_POLL("pgbouncer-poll"),
        /** Producers and worker through PgBouncer, LISTEN on a direct connection ({@code listenVia}). */
        PGBOUNCER_LISTEN_DIRECT("pgbouncer-listen-direct"),
        /** graphile-worker, in Node.js, on the same database. */
        GRAPHILE_WORKER("graphile-worker");

        final String label;

        Variant(String label) {
            this.label = label;
        }

        /** {@return the variant of a command-line label} */
        public static Variant of(String label) {
            for (Variant v : values()) {
                if (v.label.equals(label)) {
                    return v;
                }
            }
            throw new IllegalArgumentException("unknown variant " + label + "; choose from "
                    + java.util.Arrays.stream(values()).map(v -> v.label).toList());
        }

        /** {@return the label} */
        public String label() {
            return label;
        }

        boolean throughPgBouncer() {
            return this == PGBOUNCER_POLL || this == PGBOUNCER_LISTEN_DIRECT;
        }

        /**
         * The worker in a JVM of its own, for the variants whose worker must not hear of the
         * producers' commits in-process (which a worker in the producers' JVM does at once);
         * null for those that run in the bench's JVM.
         */
        OtherJvmWorker.@Nullable Kind otherJvm() {
            return switch (this) {
                case OTHER_JVM, IN_TRANSACTION_OTHER_JVM -> OtherJvmWorker.Kind.JOB_WORKER;
                case TRANSACTIONAL_OTHER_JVM -> OtherJvmWorker.Kind.TRANSACTIONAL;
                case POLL, PGBOUNCER_POLL -> OtherJvmWorker.Kind.POLL;
                case FIXED_POLL -> OtherJvmWorker.Kind.FIXED_POLL;
                case PGBOUNCER_LISTEN_DIRECT -> OtherJvmWorker.Kind.LISTEN_VIA;
                default -> null;
            };
        }
    }

    /** One variant in one cell, over the rounds. */
    public record Row(
            Variant variant,
            int producers,
            int rate,
            double achievedRate,
            double p50,
            double p90,
            double p99,
            double max,
            long missing,
            long failures) {}

    private final ScratchDatabase database;
    private final String schema;
    private final @Nullable Integer pgBouncerPort;
    private final Optional<GraphileWorkerPeer> graphile;
    private final AtomicInteger queues = new AtomicInteger();

    /**
     * @param database the migrated database the bench runs on
     * @param schema locksmith's schema in it
     * @param pgBouncerPort a PgBouncer on 127.0.0.1 in transaction mode in front of the
     *     database's server, or null to leave the PgBouncer variants out
     * @param graphile graphile-worker, when installed
     */
    public LatencyBench(
            ScratchDatabase database,
            String schema,
            @Nullable Integer pgBouncerPort,
            Optional<GraphileWorkerPeer> graphile) {
        this.database = database;
        this.schema = schema;
        this.pgBouncerPort = pgBouncerPort;
        this.graphile = graphile;
    }

    /** Whether {@code variant} can run here (PgBouncer given, graphile-worker installed). */
    public boolean runs(Variant variant) {
        return variant.throughPgBouncer()
                ? pgBouncerPort != null
                : variant != Variant.GRAPHILE_WORKER || graphile.isPresent();
    }

    /**
     * Runs every cell ({@code producers} x {@code rates}) for every variant, {@code rounds} times.
     *
     * @param warmUp how long each run's discarded warm-up lasts ({@link LatencyRun#runWarm}); zero
     *     for none
     * @param progress told before each run
     */
    public List<Row> run(
            List<Variant> variants,
            List<Integer> producers,
            List<Integer> rates,
            Duration warmUp,
            Duration duration,
            int rounds,
            java.util.function.Consumer<String> progress)
            throws Exception {
        List<Row> rows = new ArrayList<>();
        for (int p : producers) {
            for (int rate : rates) {
                List<List<LatencyRun.Measured>> byVariant = new ArrayList<>();
                variants.forEach(v -> byVariant.add(new ArrayList<>()));
                for (int round = 0; round < rounds; round++) {
                    for (int k = 0; k < variants.size(); k++) {
                        int i = (k + round) % variants.size();
                        Variant v = variants.get(i);
                        progress.accept(String.format(
                                "latency %s producers=%d rate=%d round %d/%d", v.label, p, rate, round + 1, rounds));
                        byVariant.get(i).add(runOne(v, p, rate, warmUp, duration));
                    }
                }
                for (int i = 0; i < variants.size(); i++) {
                    rows.add(row(variants.get(i), p, rate, byVariant.get(i)));
                }
            }
        }
        return rows;
    }

    private static Row row(Variant v, int producers, int rate, List<LatencyRun.Measured> runs) {
        return new Row(
                v,
                producers,
                rate,
                Stats.median(
                        runs.stream().map(LatencyRun.Measured::achievedRate).toList()),
                Stats.median(runs.stream().map(m -> m.percentileMillis(50)).toList()),
                Stats.median(runs.stream().map(m -> m.percentileMillis(90)).toList()),
                Stats.median(runs.stream().map(m -> m.percentileMillis(99)).toList()),
                Stats.median(runs.stream().map(LatencyRun.Measured::maxMillis).toList()),
                runs.stream().mapToLong(LatencyRun.Measured::missing).sum(),
                runs.stream().mapToLong(LatencyRun.Measured::failures).sum());
    }

    LatencyRun.Measured runOne(Variant v, int producers, int rate, Duration warmUp, Duration duration)
            throws Exception {
        if (v == Variant.GRAPHILE_WORKER) {
            return graphile.orElseThrow().run(database, producers, rate, warmUp, duration);
        }
        String queueName = "latency-" + queues.incrementAndGet();
        boolean bounced = v.throughPgBouncer();
        try (HikariDataSource workerPool = pool(bounced, 16, "latency-worker");
                HikariDataSource producerPool = pool(bounced, producers + 2, "latency-producers")) {
            LatencyRun run = new LatencyRun();
            CountDownLatch ready = new CountDownLatch(1);
            LocksmithObserver listening = OtherJvmWorker.countingDownOnListening(ready);
            PoolingMode pooling = bounced ? PoolingMode.TRANSACTION : PoolingMode.SESSION;
            JobQueue workerQueue = new JobQueue(environment(workerPool, pooling, listening));
            JobQueueConfig wake = JobQueueConfig.builder()
                    .wakeUp(
                            v == Variant.IN_TRANSACTION || v == Variant.IN_TRANSACTION_OTHER_JVM
                                    ? WakeUp.IN_TRANSACTION
                                    : WakeUp.AFTER_COMMIT)
                    .build();
            Locksmith producing = environment(producerPool, pooling, LocksmithObserver.NONE);
            JobQueue producerQueue = new JobQueue(producing, wake);
            LatencyRun.Producer produce = (p, i) -> producing
                    .dsl()
                    .transactionResult(c -> producerQueue.enqueue(c.dsl(), NewJob.of(queueName, "latency")));
            OtherJvmWorker.Kind other = v.otherJvm();
            if (other != null) {
                Process process = OtherJvmWorker.start(
                        database, url(bounced), bounced, database.jdbcUrl(), schema, queueName, other, run);
                try {
                    // a second for the worker's threads to go idle, as between bursts in production
                    Thread.sleep(1000);
                    return run.runWarm(produce, producers, rate, warmUp, duration);
                } finally {
                    OtherJvmWorker.stop(process);
                }
            }
            try (Worker worker = worker(v, workerQueue, queueName, run).start()) {
                if (!ready.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the worker's LISTEN did not come up within 30 s");
                }
                // a second for the worker's threads to go idle, as between bursts in production
                Thread.sleep(1000);
                return run.runWarm(produce, producers, rate, warmUp, duration);
            }
        }
    }

    /** Single-job enqueue throughput of one wake-up, over the rounds. */
    public record EnqueueRate(WakeUp wakeUp, double jobsPerSecond, double ratioToNone) {}

    /**
     * Single-job enqueues, one per transaction, by {@code producers} threads as fast as they go,
     * for each wake-up in turn, {@code rounds} times; the median rate of each, and its ratio to
     * {@link WakeUp#NONE}'s median (the cost of waking workers).
     */
    public List<EnqueueRate> enqueueRates(
            int producers, Duration duration, int rounds, java.util.function.Consumer<String> progress)
            throws Exception {
        WakeUp[] wakeUps = WakeUp.values();
        List<List<Double>> rates = new ArrayList<>();
        for (int i = 0; i < wakeUps.length; i++) {
            rates.add(new ArrayList<>());
        }
        try (HikariDataSource pool = pool(false, producers + 4, "enqueue-producers")) {
            Locksmith producing = environment(pool, PoolingMode.SESSION, LocksmithObserver.NONE);
            for (int round = 0; round < rounds; round++) {
                for (int k = 0; k < wakeUps.length; k++) {
                    int i = (k + round) % wakeUps.length;
                    progress.accept(String.format(
                            "enqueue wake-up %s producers=%d round %d/%d", wakeUps[i], producers, round + 1, rounds));
                    JobQueue queue = new JobQueue(
                            producing,
                            JobQueueConfig.builder().wakeUp(wakeUps[i]).build());
                    String name = "enqueue-" + queues.incrementAndGet();
                    producing.dsl().deleteFrom(JOBS).execute();
                    rates.get(i).add(enqueueAsFastAsPossible(producing, queue, name, producers, duration));
                }
            }
            producing.dsl().deleteFrom(JOBS).execute();
        }
        double none = Stats.median(rates.get(WakeUp.NONE.ordinal()));
        List<EnqueueRate> result = new ArrayList<>();
        for (int i = 0; i < wakeUps.length; i++) {
            double median = Stats.median(rates.get(i));
            result.add(new EnqueueRate(wakeUps[i], median, median / none));
        }
        return result;
    }

    private static double enqueueAsFastAsPossible(
            Locksmith producing, JobQueue queue, String name, int producers, Duration duration)
            throws InterruptedException {
        java.util.concurrent.atomic.LongAdder done = new java.util.concurrent.atomic.LongAdder();
        long end = System.nanoTime() + duration.toNanos();
        List<Thread> threads = new ArrayList<>();
        long begin = System.nanoTime();
        for (int p = 0; p < producers; p++) {
            Thread t = new Thread(() -> {
                NewJob job = NewJob.of(name, "noop");
                while (System.nanoTime() < end) {
                    producing.dsl().transaction(c -> queue.enqueue(c.dsl(), job));
                    done.increment();
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        return done.sum() / ((System.nanoTime() - begin) / 1e9);
    }

    /** The worker of a variant that runs in the bench's JVM. */
    private static Worker worker(Variant v, JobQueue queue, String name, LatencyRun run) {
        return v == Variant.TRANSACTIONAL
                ? TransactionalWorker.builder(queue, name, (jobs, tx) -> jobs.forEach(j -> run.started(j.id())))
                        .build()
                : JobWorker.builder(queue, name, (job, tx) -> run.started(job.id()))
                        .build();
    }

    private Locksmith environment(HikariDataSource pool, PoolingMode pooling, LocksmithObserver observer) {
        return Locksmith.builder(DSL.using(pool, SQLDialect.POSTGRES, new Settings().withExecuteLogging(false)))
                .schema(schema)
                .poolingMode(pooling)
                .observer(observer)
                .build();
    }

    /** The database's URL, or that of the PgBouncer in front of it. */
    private String url(boolean throughPgBouncer) {
        String url = database.jdbcUrl();
        if (throughPgBouncer) {
            url = url.replaceFirst("//([^/:]+)(:\\d+)?/", "//127.0.0.1:" + pgBouncerPort + "/")
                    + (url.contains("?") ? "&" : "?") + "prepareThreshold=0";
        }
        return url;
    }

    private HikariDataSource pool(boolean throughPgBouncer, int size, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url(throughPgBouncer));
        config.setUsername(database.user());
        config.setPassword(database.password());
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }
}

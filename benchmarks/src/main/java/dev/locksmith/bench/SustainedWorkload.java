package dev.locksmith.bench;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.TransactionalWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/**
 * sustained: consumers drain no-op jobs for the whole {@code --duration} (600 for the ten-minute
 * figure), while a producer keeps about 50,000 jobs pending, so that dead tuples pile up as they
 * do in production. Three consumers: leased claims (batches of 10) with batched completion at
 * 8 threads, library and plain JDBC ({@code lease}); {@link JobWorker} with its defaults
 * ({@code job-worker}); and {@link TransactionalWorker} with batches of 100 on 4 threads
 * ({@code tx-worker}). Reports the rate of the first and of the last window (a minute, or a
 * fifth of shorter runs) and their ratio, the table's dead tuples at the end and how often
 * autovacuum processed it: a queue whose table and indexes bloat slows down as it runs. A run
 * whose consumers have not finished a job when its duration is over goes on until they have (at
 * most {@link Runner#PATIENCE_NANOS} more), so that the jobs it reports consumed are an outcome,
 * never a matter of the machine's speed.
 */
final class SustainedWorkload implements Workload {

    static final int WORKERS = 8;
    static final int BATCH = 10;
    static final long BACKLOG = 50_000;

    private final DataSource ds;
    private final DSLContext dsl;

    SustainedWorkload(DataSource ds, DSLContext dsl) {
        this.ds = ds;
        this.dsl = dsl;
    }

    @Override
    public String name() {
        return "sustained";
    }

    @Override
    public List<Case> cases(BenchOptions o) {
        int workers = o.workers().isEmpty() ? WORKERS : o.workers().get(0);
        int workerThreads = o.workers().isEmpty() ? 4 : o.workers().get(0);
        String seconds = " " + o.duration().toSeconds() + "s";
        return List.of(
                new Case(
                        "lease batch=" + BATCH + seconds,
                        workers,
                        "jobs/s",
                        new Variant(o.duration(), (consumed, failed) -> leaseLoop(true, workers, consumed, failed)),
                        new Variant(o.duration(), (consumed, failed) -> leaseLoop(false, workers, consumed, failed))),
                new Case(
                        "job-worker defaults" + seconds,
                        workerThreads,
                        "jobs/s",
                        new Variant(o.duration(), (consumed, failed) -> jobWorker(workerThreads, consumed)),
                        null),
                new Case(
                        "tx-worker batch=100" + seconds,
                        workerThreads,
                        "jobs/s",
                        new Variant(o.duration(), (consumed, failed) -> transactionalWorker(workerThreads, consumed)),
                        null));
    }

    /**
     * Starts consuming, adding what it consumed to one counter and failed operations to the
     * other (the workers log theirs); closing stops it.
     */
    private interface Consumers {
        AutoCloseable start(AtomicLong consumed, AtomicLong failed) throws Exception;
    }

    private AutoCloseable leaseLoop(boolean library, int workers, AtomicLong consumed, AtomicLong failed) {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        JobQueue queue = new JobQueue(dsl);
        Claim claim = Claim.of(QueueWorkloads.QUEUE, BATCH);
        for (int w = 0; w < workers; w++) {
            String me = (library ? "lib-" : "raw-") + w;
            threads.add(new Thread(() -> {
                while (!stop.get()) {
                    try {
                        int n;
                        if (library) {
                            List<Job> jobs = queue.claim(claim, Duration.ofMinutes(5), me);
                            if (!jobs.isEmpty()) {
                                dsl.transaction(c -> queue.completeAll(c.dsl(), jobs));
                            }
                            n = jobs.size();
                        } else {
                            n = rawClaimAndComplete(me);
                        }
                        consumed.addAndGet(n);
                    } catch (Exception e) {
                        failed.incrementAndGet();
                    }
                }
            }));
        }
        threads.forEach(Thread::start);
        return () -> {
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
        };
    }

    private AutoCloseable jobWorker(int threads, AtomicLong consumed) {
        return JobWorker.builder(
                        new JobQueue(Locksmith.builder(ds)
                                .schema(Locksmith.of(dsl).schema())
                                .build()),
                        QueueWorkloads.QUEUE,
                        (job, tx) -> consumed.incrementAndGet())
                .threads(threads)
                .build()
                .start();
    }

    private AutoCloseable transactionalWorker(int threads, AtomicLong consumed) {
        return TransactionalWorker.builder(
                        new JobQueue(Locksmith.builder(ds)
                                .schema(Locksmith.of(dsl).schema())
                                .build()),
                        QueueWorkloads.QUEUE,
                        (jobs, tx) -> consumed.addAndGet(jobs.size()))
                .threads(threads)
                .batchSize(100)
                .build()
                .start();
    }

    private int rawClaimAndComplete(String me) throws Exception {
        List<QueueWorkloads.Leased> claimed = Jdbc.autoCommit(ds, c -> QueueWorkloads.rawLeaseClaim(c, me, BATCH));
        if (!claimed.isEmpty()) {
            Jdbc.inTransaction(ds, c -> QueueWorkloads.rawCompleteAll(c, claimed));
        }
        return claimed.size();
    }

    private final class Variant implements SelfTimed {
        final Duration duration;
        final Consumers consumers;
        final AtomicLong produced = new AtomicLong();
        final AtomicLong consumed = new AtomicLong();
        final AtomicLong failures = new AtomicLong();
        double first;
        double last;
        double window;
        double deadTuples;
        double autovacuums;
        /** Manual VACUUMs: the workers' own (their vacuumInterval), in the library variants. */
        double vacuums;
        /** Generations the workers turned (job_generation's moves; 0 where jobs is one table). */
        double generations;

        Variant(Duration duration, Consumers consumers) {
            this.duration = duration;
            this.consumers = consumers;
        }

        @Override
        public void prepare() throws Exception {
            QueueWorkloads.refill(ds, BACKLOG);
            Jdbc.autoCommit(ds, c -> Jdbc.update(c, "VACUUM ANALYZE jobs"));
            produced.set(BACKLOG);
            consumed.set(0);
            failures.set(0);
        }

        @Override
        public double measure() throws Exception {
            AtomicBoolean stop = new AtomicBoolean();
            Thread producer = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        if (produced.get() - consumed.get() < BACKLOG) {
                            Jdbc.autoCommit(
                                    ds,
                                    c -> Jdbc.update(
                                            c,
                                            "INSERT INTO jobs (queue, kind) "
                                                    + "SELECT ?, 'noop' FROM generate_series(1, 5000)",
                                            QueueWorkloads.QUEUE));
                            produced.addAndGet(5000);
                        } else {
                            Thread.sleep(5);
                        }
                    } catch (Exception e) {
                        failures.incrementAndGet();
                    }
                }
            });
            long autovacuumsBefore = vacuumCount(false);
            long vacuumsBefore = vacuumCount(true);
            long generationBefore = generation();
            long seconds = Math.max(5, duration.toSeconds());
            long[] marks = new long[(int) seconds + 1];
            producer.start();
            long start = System.nanoTime();
            try (AutoCloseable running = consumers.start(consumed, failures)) {
                for (int i = 1; i <= seconds; i++) {
                    long until = start + TimeUnit.SECONDS.toNanos(i);
                    while (System.nanoTime() < until) {
                        Thread.sleep(Math.max(1, (until - System.nanoTime()) / 1_000_000));
                    }
                    marks[i] = consumed.get();
                }
                long patience = System.nanoTime() + Runner.PATIENCE_NANOS;
                while (consumed.get() == 0 && System.nanoTime() < patience) {
                    Thread.sleep(10);
                }
            } finally {
                stop.set(true);
                producer.join();
            }
            int w = (int) Math.min(60, seconds / 5);
            window = w;
            first = marks[w] / (double) w;
            last = (marks[(int) seconds] - marks[(int) seconds - w]) / (double) w;
            deadTuples = Jdbc.autoCommit(
                    ds, c -> Jdbc.queryLong(c, Jdbc.overPartitions("pg_stat_get_dead_tuples"), "jobs", "jobs"));
            autovacuums = vacuumCount(false) - autovacuumsBefore;
            vacuums = vacuumCount(true) - vacuumsBefore;
            generations = generation() - generationBefore;
            return marks[(int) seconds] / (double) seconds;
        }

        /**
         * {@code autovacuum_count}, or {@code vacuum_count} (manual: the workers' own VACUUMs),
         * summed over jobs and its partitions.
         */
        private long vacuumCount(boolean manual) throws Exception {
            return Jdbc.autoCommit(
                    ds,
                    c -> Jdbc.queryLong(
                            c,
                            Jdbc.overPartitions(manual ? "pg_stat_get_vacuum_count" : "pg_stat_get_autovacuum_count"),
                            "jobs",
                            "jobs"));
        }

        /** job_generation's last value, or 0 where jobs is one table (Citus, an older schema). */
        private long generation() throws Exception {
            return Jdbc.autoCommit(
                    ds,
                    c -> Jdbc.queryLong(
                            c, "SELECT coalesce(pg_sequence_last_value(to_regclass('job_generation')), 0)"));
        }

        /** Every consumer finished its last batch before stopping, so a job left running was lost. */
        @Override
        public long verify() throws Exception {
            return Jdbc.autoCommit(ds, c -> Jdbc.queryLong(c, "SELECT count(*) FROM jobs WHERE status = 'running'"));
        }

        @Override
        public Map<String, Double> extras() {
            return Map.of(
                    "window_s",
                    window,
                    "first_window_jobs_per_s",
                    first,
                    "last_window_jobs_per_s",
                    last,
                    "last_over_first",
                    first > 0 ? last / first : 0,
                    "dead_tuples_at_end",
                    deadTuples,
                    "autovacuums",
                    autovacuums,
                    "vacuums",
                    vacuums,
                    "generations",
                    generations,
                    "consumed_jobs",
                    (double) consumed.get(),
                    "failed_operations",
                    (double) failures.get());
        }
    }
}

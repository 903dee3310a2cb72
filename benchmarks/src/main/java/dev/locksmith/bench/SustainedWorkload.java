package dev.locksmith.bench;

import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/**
 * sustained: leased claims (batches of 10) with batched completion at 8 workers for the whole
 * {@code --duration} (use 300 for the five-minute figure), while a producer keeps about 50,000
 * jobs pending, so dead tuples pile up as they do in production. Reports the rate of the first
 * and of the last fifth of the run and their ratio: a queue whose table and indexes bloat
 * slows down as it runs.
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
        return List.of(new Case(
                "lease batch=" + BATCH + " " + o.duration().toSeconds() + "s",
                workers,
                "jobs/s",
                new Variant(true, workers, o.duration()),
                new Variant(false, workers, o.duration())));
    }

    private final class Variant implements SelfTimed {
        final boolean library;
        final int workers;
        final Duration duration;
        final AtomicLong produced = new AtomicLong();
        final AtomicLong consumed = new AtomicLong();
        final AtomicLong failures = new AtomicLong();
        double first;
        double last;

        Variant(boolean library, int workers, Duration duration) {
            this.library = library;
            this.workers = workers;
            this.duration = duration;
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
                            failures.incrementAndGet();
                        }
                    }
                }));
            }
            threads.add(new Thread(() -> {
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
            }));
            threads.forEach(Thread::start);
            long start = System.nanoTime();
            long fifth = duration.toNanos() / 5;
            long[] marks = new long[6];
            for (int i = 1; i <= 5; i++) {
                long until = start + fifth * i;
                while (System.nanoTime() < until) {
                    Thread.sleep(Math.max(1, (until - System.nanoTime()) / 1_000_000));
                }
                marks[i] = consumed.get();
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            double fifthSeconds = fifth / 1e9;
            first = marks[1] / fifthSeconds;
            last = (marks[5] - marks[4]) / fifthSeconds;
            return marks[5] / (fifthSeconds * 5);
        }

        private int rawClaimAndComplete(String me) throws Exception {
            List<QueueWorkloads.Leased> claimed = Jdbc.autoCommit(ds, c -> QueueWorkloads.rawLeaseClaim(c, me, BATCH));
            if (!claimed.isEmpty()) {
                Jdbc.inTransaction(ds, c -> QueueWorkloads.rawCompleteAll(c, claimed));
            }
            return claimed.size();
        }

        /** Every worker finished its last batch before stopping, so a job left running was lost. */
        @Override
        public long verify() throws Exception {
            return Jdbc.autoCommit(ds, c -> Jdbc.queryLong(c, "SELECT count(*) FROM jobs WHERE status = 'running'"));
        }

        @Override
        public Map<String, Double> extras() {
            return Map.of(
                    "first_fifth_jobs_per_s",
                    first,
                    "last_fifth_jobs_per_s",
                    last,
                    "last_over_first",
                    first > 0 ? last / first : 0,
                    "failed_operations",
                    (double) failures.get());
        }
    }
}

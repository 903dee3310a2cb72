package dev.locksmith.bench;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.WakeUp;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/**
 * drain: enqueue 50,000 no-op jobs in batches of 1,000 ({@code enqueueAll} on the library side, a
 * JDBC {@code COPY} on the raw side), then process them all; enqueue rate is an extra figure,
 * processing rate the throughput. The library side
 * processes with {@link TransactionalWorker}; the raw side with threads running the same
 * {@code DELETE ... SKIP LOCKED RETURNING} in batches. Every processed job id is recorded, so a
 * duplicate or a loss counts as a violation.
 */
final class DrainWorkload implements Workload {

    static final int JOBS = 50_000;
    static final int ENQUEUE_BATCH = 1000;

    private final DataSource ds;
    private final DSLContext dsl;

    private final Optional<PgBench> pgbench;

    DrainWorkload(DataSource ds, DSLContext dsl, Optional<PgBench> pgbench) {
        this.ds = ds;
        this.dsl = dsl;
        this.pgbench = pgbench;
    }

    @Override
    public String name() {
        return "drain";
    }

    /**
     * TransactionalWorker ({@code tx}) at its defaults (4 threads, batch 10), batch 100 and 500
     * on 4 threads, batch 1 on 16, and batch 100 with each job under a savepoint; JobWorker
     * ({@code lease}) at its defaults (4 threads), with 32 threads, and tuned (prefetch 1,000,
     * with one and with two claimers). The raw and pgbench variants run the worker's statements
     * with the same threads: the transactional claim in a transaction per batch (in pgbench an
     * auto-committed statement, and for {@code pgbench-in-transaction} inside BEGIN ... COMMIT
     * as the worker sends it); leased claims of as many jobs as the worker has threads, each
     * batch completed with one statement.
     */
    @Override
    public List<Case> cases(BenchOptions o) {
        List<Case> cases = new ArrayList<>();
        List<String> configs = o.quick()
                ? List.of("tx batch=100")
                : List.of(
                        "tx batch=10",
                        "tx batch=100",
                        "tx batch=500",
                        "tx batch=1",
                        "tx batch=100 isolate",
                        "tx batch=100 pgbench-in-transaction",
                        "lease threads=4",
                        "lease threads=32",
                        "lease prefetch=1000",
                        "lease prefetch=1000 claimers=2");
        for (String config : configs) {
            boolean tx = config.startsWith("tx ");
            boolean isolate = config.endsWith(" isolate");
            // the pgbench baselines run the claim as the worker does, inside BEGIN ... COMMIT
            java.util.function.UnaryOperator<String> pgbenchShape = config.endsWith(" pgbench-in-transaction")
                    ? QueueWorkloads::inTransaction
                    : java.util.function.UnaryOperator.identity();
            int size = Integer.parseInt(config.replaceAll("^\\D+=(\\d+).*$", "$1"));
            // tuned: 4 threads claiming up to 1,000 ahead; its baselines claim 500 at a time
            boolean tuned = config.startsWith("lease prefetch=");
            int defaultWorkers = tx ? (size == 1 ? 16 : 4) : tuned ? 4 : size;
            for (int workers : o.workers().isEmpty() ? List.of(defaultWorkers) : o.workers()) {
                Case c;
                if (tx) {
                    Raw raw = new Raw(workers, size, isolate);
                    c = new Case(config, workers, "jobs/s", new Library(workers, size, isolate), raw);
                    if (pgbench.isPresent() && !isolate) {
                        int transactions = JOBS / (size * workers) + 2;
                        c = c.withPgbench(
                                pgbench.get()
                                        .variant(
                                                emptied(raw),
                                                ds,
                                                pgbenchShape.apply(QueueWorkloads.pgbenchTxClaim(size)),
                                                workers,
                                                o,
                                                transactions),
                                pgbench.get()
                                        .variant(
                                                emptied(raw),
                                                ds,
                                                pgbenchShape.apply(QueueWorkloads.plainTxClaim(size)),
                                                workers,
                                                o,
                                                transactions));
                    }
                } else {
                    // JobWorker claims for its free threads and, by default, up to eight per thread
                    // ahead while claims are quick: the raw and pgbench claims take that many (500
                    // when tuned).
                    int claim = tuned ? size / 2 : workers * 8;
                    LeaseRaw raw = new LeaseRaw(workers, claim);
                    int claimers = config.contains(" claimers=")
                            ? Integer.parseInt(config.replaceAll("^.* claimers=", ""))
                            : 1;
                    c = new Case(config, workers, "jobs/s", new Leased(workers, tuned ? size : -1, claimers), raw);
                    if (pgbench.isPresent()) {
                        int transactions = JOBS / (claim * workers) + 2;
                        c = c.withPgbench(
                                pgbench.get()
                                        .variant(
                                                emptied(raw),
                                                ds,
                                                QueueWorkloads.pgbenchLease(claim),
                                                workers,
                                                o,
                                                transactions),
                                pgbench.get()
                                        .variant(
                                                emptied(raw),
                                                ds,
                                                QueueWorkloads.plainLease(claim),
                                                workers,
                                                o,
                                                transactions));
                    }
                }
                cases.add(c);
            }
        }
        return cases;
    }

    /**
     * The state {@code raw} prepares, checked for what pgbench can show: it reports no ids, so
     * its run is correct when no job is left (enough transactions to drain all are run).
     */
    private Workload.Variant emptied(Base raw) {
        return new SelfTimed() {
            @Override
            public void prepare() throws Exception {
                raw.prepare();
            }

            @Override
            public long verify() throws Exception {
                return Jdbc.autoCommit(ds, c -> Jdbc.queryLong(c, "SELECT count(*) FROM jobs"));
            }

            @Override
            public double measure() {
                throw new UnsupportedOperationException("measured by pgbench");
            }
        };
    }

    private abstract class Base implements SelfTimed {
        final int workers;
        final int batch;
        final boolean isolate;
        final Set<Long> seen = ConcurrentHashMap.newKeySet();
        final AtomicLong duplicates = new AtomicLong();
        double enqueueRate;

        Base(int workers, int batch, boolean isolate) {
            this.workers = workers;
            this.batch = batch;
            this.isolate = isolate;
        }

        void record(long id) {
            if (!seen.add(id)) {
                duplicates.incrementAndGet();
            }
        }

        @Override
        public void prepare() throws Exception {
            seen.clear();
            duplicates.set(0);
            Jdbc.autoCommit(ds, c -> Jdbc.update(c, "TRUNCATE jobs"));
            long start = System.nanoTime();
            enqueue();
            enqueueRate = JOBS / ((System.nanoTime() - start) / 1e9);
            Jdbc.autoCommit(ds, c -> Jdbc.update(c, "ANALYZE jobs"));
        }

        abstract void enqueue() throws Exception;

        @Override
        public boolean warmsUpByRepeating() {
            return true;
        }

        @Override
        public long units() {
            return JOBS;
        }

        @Override
        public long verify() throws Exception {
            long left = Jdbc.autoCommit(ds, c -> Jdbc.queryLong(c, "SELECT count(*) FROM jobs"));
            return duplicates.get() + left + (JOBS - seen.size());
        }

        @Override
        public Map<String, Double> extras() {
            return Map.of("enqueue_jobs_per_s", enqueueRate);
        }
    }

    /** The jobs enqueued as the library's callers do: {@code enqueueAll} of 1,000 per transaction. */
    private void enqueueWithLibrary() {
        JobQueue queue =
                new JobQueue(dsl, JobQueueConfig.builder().wakeUp(WakeUp.NONE).build());
        List<NewJob> chunk = Collections.nCopies(ENQUEUE_BATCH, NewJob.of(QueueWorkloads.QUEUE, "noop"));
        for (int i = 0; i < JOBS / ENQUEUE_BATCH; i++) {
            queue.enqueueAll(dsl, chunk);
        }
    }

    private final class Library extends Base {
        Library(int workers, int batch, boolean isolate) {
            super(workers, batch, isolate);
        }

        @Override
        void enqueue() {
            enqueueWithLibrary();
        }

        @Override
        public double measure() throws Exception {
            long start = System.nanoTime();
            try (TransactionalWorker worker = TransactionalWorker.builder(
                            new JobQueue(Locksmith.builder(ds)
                                    .schema(Locksmith.of(dsl).schema())
                                    .build()),
                            QueueWorkloads.QUEUE,
                            (jobs, tx) -> {
                                for (Job job : jobs) {
                                    record(job.id());
                                }
                            })
                    .threads(workers)
                    .batchSize(batch)
                    .listen(false)
                    .pollInterval(java.time.Duration.ofMillis(5))
                    .isolateEachJob(isolate)
                    .build()
                    .start()) {
                long deadline = start + TimeUnit.MINUTES.toNanos(10);
                while (worker.processed() < JOBS && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
            }
            return JOBS / ((System.nanoTime() - start) / 1e9);
        }
    }

    private final class Raw extends Base {
        Raw(int workers, int batch, boolean isolate) {
            super(workers, batch, isolate);
        }

        /**
         * The fastest plain way to load the same rows: one {@code COPY ... FROM STDIN} per batch
         * of 1,000, each in its own transaction as the library's {@code enqueueAll} calls are.
         */
        @Override
        void enqueue() throws SQLException {
            StringBuilder rows = new StringBuilder();
            for (int i = 0; i < ENQUEUE_BATCH; i++) {
                rows.append(QueueWorkloads.QUEUE).append("\t0\tnoop\t{}\t100\t25\n");
            }
            String data = rows.toString();
            for (int round = 0; round < JOBS / ENQUEUE_BATCH; round++) {
                Jdbc.autoCommit(ds, c -> {
                    try {
                        return c.unwrap(org.postgresql.PGConnection.class)
                                .getCopyAPI()
                                .copyIn(
                                        "COPY jobs (queue, shard, kind, payload, priority, max_attempts) FROM STDIN",
                                        new java.io.StringReader(data));
                    } catch (java.io.IOException e) {
                        throw new SQLException(e);
                    }
                });
            }
        }

        @Override
        public double measure() throws Exception {
            long start = System.nanoTime();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                Thread t = new Thread(() -> {
                    try {
                        while (true) {
                            int n = Jdbc.inTransaction(ds, this::claimBatch);
                            if (n == 0) {
                                return;
                            }
                        }
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            return JOBS / ((System.nanoTime() - start) / 1e9);
        }

        private int claimBatch(Connection c) throws SQLException {
            try (PreparedStatement s = c.prepareStatement(QueueWorkloads.txClaim(batch))) {
                s.setString(1, QueueWorkloads.QUEUE);
                try (ResultSet rs = s.executeQuery()) {
                    List<Long> ids = new ArrayList<>();
                    int n = QueueWorkloads.readRows(rs, ids);
                    for (Long id : ids) {
                        if (isolate) {
                            c.releaseSavepoint(c.setSavepoint());
                        }
                        record(id);
                    }
                    return n;
                }
            }
        }
    }

    /** The leased worker, {@link JobWorker}, at its defaults but for the thread count. */
    private final class Leased extends Base {
        /** The worker's prefetch, or negative for its default. */
        private final int prefetch;
        /** Claim statements at once ({@link JobWorker.Builder#claimers}). */
        private final int claimers;

        Leased(int workers, int prefetch, int claimers) {
            super(workers, workers, false);
            this.prefetch = prefetch;
            this.claimers = claimers;
        }

        @Override
        void enqueue() {
            enqueueWithLibrary();
        }

        @Override
        public double measure() throws Exception {
            AtomicLong handled = new AtomicLong();
            long start = System.nanoTime();
            JobWorker.Builder builder = JobWorker.builder(
                            new JobQueue(Locksmith.builder(ds)
                                    .schema(Locksmith.of(dsl).schema())
                                    .build()),
                            QueueWorkloads.QUEUE,
                            (job, tx) -> {
                                record(job.id());
                                handled.incrementAndGet();
                            })
                    .threads(workers)
                    .claimers(claimers);
            if (prefetch >= 0) {
                builder.prefetch(prefetch);
            }
            try (JobWorker worker = builder.build().start()) {
                long deadline = start + TimeUnit.MINUTES.toNanos(10);
                // Handled is not yet done: then wait until the table is empty (completions
                // committed), counting rows only once every job was handled.
                while (System.nanoTime() < deadline && handled.get() < JOBS) {
                    Thread.sleep(1);
                }
                while (System.nanoTime() < deadline
                        && Jdbc.autoCommit(ds, c -> Jdbc.queryLong(c, "SELECT count(*) FROM jobs")) > 0) {
                    Thread.sleep(1);
                }
                return JOBS / ((System.nanoTime() - start) / 1e9);
            }
        }
    }

    /** JobWorker's statements in plain JDBC: leased claims of {@code claim} jobs, each batch completed at once. */
    private final class LeaseRaw extends Base {
        private final int claim;

        LeaseRaw(int workers, int claim) {
            super(workers, claim, false);
            this.claim = claim;
        }

        @Override
        void enqueue() throws SQLException {
            new Raw(workers, batch, false).enqueue();
        }

        @Override
        public double measure() throws Exception {
            long start = System.nanoTime();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                String me = "raw-" + w;
                Thread t = new Thread(() -> {
                    try {
                        while (true) {
                            List<QueueWorkloads.Leased> claimed =
                                    Jdbc.autoCommit(ds, c -> QueueWorkloads.rawLeaseClaim(c, me, claim));
                            if (claimed.isEmpty()) {
                                return;
                            }
                            claimed.forEach(l -> record(l.id()));
                            Jdbc.inTransaction(ds, c -> QueueWorkloads.rawCompleteAll(c, claimed));
                        }
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            return JOBS / ((System.nanoTime() - start) / 1e9);
        }
    }
}

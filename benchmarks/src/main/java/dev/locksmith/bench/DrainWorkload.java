package dev.locksmith.bench;

import dev.locksmith.TableSchema;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/**
 * drain: enqueue 50,000 no-op jobs in batches of 1,000 (one multi-row INSERT each), then process
 * them all; enqueue rate is an extra figure, processing rate the throughput. The library side
 * processes with {@link TransactionalWorker}; the raw side with threads running the same
 * {@code DELETE ... SKIP LOCKED RETURNING} in batches. Every processed job id is recorded, so a
 * duplicate or a loss counts as a violation.
 */
final class DrainWorkload implements Workload {

    static final int JOBS = 50_000;
    static final int ENQUEUE_BATCH = 1000;

    private final DataSource ds;
    private final DSLContext dsl;

    DrainWorkload(DataSource ds, DSLContext dsl) {
        this.ds = ds;
        this.dsl = dsl;
    }

    @Override
    public String name() {
        return "drain";
    }

    @Override
    public List<Case> cases(BenchOptions o) {
        List<Case> cases = new ArrayList<>();
        List<int[]> configs = o.quick()
                ? List.of(new int[] {4, 100})
                : List.of(
                        new int[] {2, 10},
                        new int[] {4, 10},
                        new int[] {2, 100},
                        new int[] {4, 100},
                        new int[] {8, 100},
                        new int[] {4, 500});
        for (int[] config : configs) {
            for (int workers : o.workers().isEmpty() ? List.of(config[0]) : o.workers()) {
                int batch = config[1];
                cases.add(new Case(
                        "batch=" + batch,
                        workers,
                        "jobs/s",
                        new Library(workers, batch, false),
                        new Raw(workers, batch, false)));
                if (!o.quick()) {
                    // each job under its own savepoint (TransactionalWorker.isolateEachJob), to price isolation
                    cases.add(new Case(
                            "batch=" + batch + " isolate",
                            workers,
                            "jobs/s",
                            new Library(workers, batch, true),
                            new Raw(workers, batch, true)));
                }
            }
        }
        return cases;
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
        public long verify() throws Exception {
            long left = Jdbc.autoCommit(ds, c -> Jdbc.queryLong(c, "SELECT count(*) FROM jobs"));
            return duplicates.get() + left + (JOBS - seen.size());
        }

        @Override
        public Map<String, Double> extras() {
            return Map.of("enqueue_jobs_per_s", enqueueRate);
        }
    }

    private final class Library extends Base {
        private final JobQueue queue = new JobQueue(
                dsl, JobQueueConfig.builder().notifyOnEnqueue(false).build());

        Library(int workers, int batch, boolean isolate) {
            super(workers, batch, isolate);
        }

        @Override
        void enqueue() {
            List<NewJob> chunk = Collections.nCopies(ENQUEUE_BATCH, NewJob.of(QueueWorkloads.QUEUE, "noop"));
            for (int i = 0; i < JOBS / ENQUEUE_BATCH; i++) {
                queue.enqueueAll(dsl, chunk);
            }
        }

        @Override
        public double measure() throws Exception {
            long start = System.nanoTime();
            try (TransactionalWorker worker = TransactionalWorker.builder(ds, QueueWorkloads.QUEUE, (jobs, tx) -> {
                        for (Job job : jobs) {
                            record(job.id());
                        }
                    })
                    .threads(workers)
                    .batchSize(batch)
                    .listen(false)
                    .pollInterval(java.time.Duration.ofMillis(5))
                    .isolateEachJob(isolate)
                    .schema(TableSchema.mappedSchema(dsl.settings()))
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

        @Override
        void enqueue() throws SQLException {
            // The statement JobQueue.enqueueAll sends, written out.
            StringBuilder sql = new StringBuilder("INSERT INTO jobs (queue, shard, kind, payload, priority, run_at, "
                    + "max_attempts, unique_key) VALUES ");
            for (int i = 0; i < ENQUEUE_BATCH; i++) {
                sql.append(i == 0 ? "" : ", ").append("(?, ?, ?, ?::jsonb, ?, now(), ?, ?)");
            }
            sql.append(
                    " ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL AND status IN ('pending', 'running')"
                            + " DO NOTHING RETURNING id, queue, unique_key");
            String statement = sql.toString();
            for (int round = 0; round < JOBS / ENQUEUE_BATCH; round++) {
                Jdbc.autoCommit(ds, c -> {
                    try (PreparedStatement s = c.prepareStatement(statement)) {
                        int p = 1;
                        for (int i = 0; i < ENQUEUE_BATCH; i++) {
                            s.setString(p++, QueueWorkloads.QUEUE);
                            s.setInt(p++, 0);
                            s.setString(p++, "noop");
                            s.setString(p++, "{}");
                            s.setShort(p++, (short) 100);
                            s.setInt(p++, 25);
                            s.setString(p++, null);
                        }
                        try (ResultSet rs = s.executeQuery()) {
                            while (rs.next()) {
                                rs.getLong(1);
                            }
                        }
                    }
                    return null;
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
            try (PreparedStatement s = c.prepareStatement(QueueWorkloads.RAW_TX_CLAIM)) {
                s.setString(1, QueueWorkloads.QUEUE);
                s.setInt(2, batch);
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
}

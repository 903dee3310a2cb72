package dev.locksmith.bench;

import dev.locksmith.internal.Savepoints;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/** queue-tx (transactional claims) and queue-lease (leased claims with batched completion). */
final class QueueWorkloads {

    static final String QUEUE = "bench";
    /** The columns the library reads into a Job. */
    static final String RETURNING = "RETURNING id, queue, shard, kind, payload, priority, run_at, status, attempts, "
            + "max_attempts, locked_by, locked_until, unique_key, last_error, created_at, lease_id, traceparent, "
            + "ordering_key";

    /** The library's claimable jobs: due, pending, and without an ordering key or the head of theirs. */
    static final String CLAIMABLE =
            "SELECT id FROM jobs WHERE queue = ? AND status = 'pending' AND run_at <= statement_timestamp() "
                    + "AND (ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs earlier "
                    + "WHERE earlier.queue = jobs.queue AND earlier.ordering_key = jobs.ordering_key "
                    + "AND earlier.status IN ('pending', 'running') AND earlier.id < jobs.id)) "
                    + "ORDER BY priority, run_at, id LIMIT ? FOR UPDATE SKIP LOCKED";
    /** The claimable jobs as the library chose them before ordering keys: keys ignored. */
    static final String PRE_KEYS_CLAIMABLE =
            "SELECT id FROM jobs WHERE queue = ? AND status = 'pending' AND run_at <= statement_timestamp() "
                    + "ORDER BY priority, run_at, id LIMIT ? FOR UPDATE SKIP LOCKED";

    static final String RAW_TX_CLAIM = "DELETE FROM jobs WHERE id IN (" + CLAIMABLE + ") " + RETURNING;
    static final String RAW_LEASE_CLAIM = leaseClaim(CLAIMABLE);

    /** The lease claim of the jobs {@code claimable} selects. */
    static String leaseClaim(String claimable) {
        return "UPDATE jobs SET status = 'running', locked_by = ?, "
                + "locked_until = now() + ?::interval, lease_id = gen_random_uuid(), attempts = attempts + 1, "
                + "updated_at = now() WHERE id IN ("
                + claimable + ") " + RETURNING;
    }

    private QueueWorkloads() {}

    /** Empties the table and fills it with {@code count} due no-op jobs. */
    static void refill(DataSource ds, long count) throws SQLException {
        Jdbc.autoCommit(ds, c -> {
            Jdbc.update(c, "TRUNCATE jobs");
            Jdbc.update(c, "INSERT INTO jobs (queue, kind) SELECT ?, 'noop' FROM generate_series(1, ?)", QUEUE, count);
            Jdbc.update(c, "ANALYZE jobs");
            return null;
        });
    }

    /** Reads every returned row as the library does, so both sides pay for materializing jobs. */
    static int readRows(ResultSet rs, List<Long> ids) throws SQLException {
        int n = 0;
        while (rs.next()) {
            ids.add(rs.getLong(1));
            rs.getString(2);
            rs.getInt(3);
            rs.getString(4);
            rs.getString(5);
            rs.getInt(6);
            rs.getObject(7);
            rs.getString(8);
            rs.getInt(9);
            rs.getInt(10);
            rs.getString(11);
            rs.getObject(12);
            n++;
        }
        return n;
    }

    /** Base of the queue variants: jobs are prefilled; a run ends when time is up or the queue is empty. */
    abstract static class Prefilled implements Workload.Variant {
        final DataSource ds;
        final long prefill;

        Prefilled(DataSource ds, long prefill) {
            this.ds = ds;
            this.prefill = prefill;
        }

        @Override
        public void prepare() throws Exception {
            refill(ds, prefill);
        }

        @Override
        public boolean stopsWhenEmpty() {
            return true;
        }

        /** Jobs neither claimed nor still pending: lost work. Claimed jobs are deleted. */
        @Override
        public long verify() throws Exception {
            return Jdbc.autoCommit(
                    ds, c -> Jdbc.queryLong(c, "SELECT count(*) FROM jobs WHERE status NOT IN ('pending')"));
        }
    }

    static Workload queueTx(DataSource ds, DSLContext dsl) {
        return new Workload() {
            @Override
            public String name() {
                return "queue-tx";
            }

            @Override
            public List<Case> cases(BenchOptions o) {
                JobQueue queue = new JobQueue(dsl);
                List<Case> cases = new ArrayList<>();
                List<Integer> batches = o.quick() ? List.of(1, 10) : List.of(1, 10, 100);
                for (int batch : batches) {
                    for (int workers : o.workersOr(o.quick() ? List.of(1, 4) : List.of(1, 2, 4, 8, 16))) {
                        long prefill = prefill(o, batch == 1 ? 15_000 : batch == 10 ? 60_000 : 120_000);
                        Claim claim = Claim.of(QUEUE, batch);
                        cases.add(Workload.inEveryMode(
                                "batch=" + batch,
                                workers,
                                "jobs/s",
                                dsl,
                                library -> txLibrary(ds, library, new JobQueue(library), prefill, claim, false),
                                txRaw(ds, prefill, batch, false)));
                        if (batch > 1 && !o.quick()) {
                            // a savepoint around each job, as TransactionalWorker isolates jobs
                            cases.add(new Case(
                                    "batch=" + batch + " isolate",
                                    workers,
                                    "jobs/s",
                                    txLibrary(ds, dsl, queue, prefill, claim, true),
                                    txRaw(ds, prefill, batch, true)));
                        }
                    }
                }
                return cases;
            }
        };
    }

    private static Workload.Variant txLibrary(
            DataSource ds, DSLContext dsl, JobQueue queue, long prefill, Claim claim, boolean isolate) {
        return new Prefilled(ds, prefill) {
            @Override
            public Workload.Op op(int worker) {
                return () -> dsl.transactionResult(c -> {
                    List<Job> jobs = queue.claimInTransaction(c.dsl(), claim);
                    if (isolate) {
                        for (Job job : jobs) {
                            Savepoints.unit(c.dsl(), () -> job);
                        }
                    }
                    return jobs.size();
                });
            }
        };
    }

    private static Workload.Variant txRaw(DataSource ds, long prefill, int batch, boolean isolate) {
        return new Prefilled(ds, prefill) {
            @Override
            public Workload.Op op(int worker) {
                return () -> Jdbc.inTransaction(ds, c -> {
                    try (PreparedStatement s = c.prepareStatement(RAW_TX_CLAIM)) {
                        s.setString(1, QUEUE);
                        s.setInt(2, batch);
                        try (ResultSet rs = s.executeQuery()) {
                            int n = readRows(rs, new ArrayList<>());
                            for (int i = 0; isolate && i < n; i++) {
                                c.releaseSavepoint(c.setSavepoint());
                            }
                            return n;
                        }
                    }
                });
            }
        };
    }

    static Workload queueLease(DataSource ds, DSLContext dsl) {
        return new Workload() {
            @Override
            public String name() {
                return "queue-lease";
            }

            @Override
            public List<Case> cases(BenchOptions o) {
                Duration lease = Duration.ofMinutes(5);
                List<Case> cases = new ArrayList<>();
                List<Integer> batches = o.quick() ? List.of(1, 100) : List.of(1, 10, 100, 500);
                for (int batch : batches) {
                    for (int workers : o.workersOr(o.quick() ? List.of(4) : List.of(1, 4, 16, 64))) {
                        long prefill = prefill(o, batch == 1 ? 8_000 : batch == 10 ? 40_000 : 80_000);
                        Claim claim = Claim.of(QUEUE, batch);
                        Variant raw = new Prefilled(ds, prefill) {
                            @Override
                            public Op op(int worker) {
                                String me = "raw-" + worker;
                                return () -> {
                                    List<Leased> claimed = Jdbc.autoCommit(ds, c -> rawLeaseClaim(c, me, batch));
                                    if (!claimed.isEmpty()) {
                                        Jdbc.inTransaction(ds, c -> rawCompleteAll(c, claimed));
                                    }
                                    return claimed.size();
                                };
                            }
                        };
                        cases.add(Workload.inEveryMode(
                                "batch=" + batch,
                                workers,
                                "jobs/s",
                                dsl,
                                library -> leaseLibrary(
                                        ds,
                                        library,
                                        new JobQueue(library, JobQueueConfig.defaults()),
                                        prefill,
                                        claim,
                                        lease),
                                raw));
                    }
                }
                return cases;
            }
        };
    }

    static Workload.Variant leaseLibrary(
            DataSource ds, DSLContext dsl, JobQueue queue, long prefill, Claim claim, Duration lease) {
        return new Prefilled(ds, prefill) {
            @Override
            public Workload.Op op(int worker) {
                String me = "lib-" + worker;
                return () -> {
                    List<Job> jobs = queue.claim(claim, lease, me);
                    if (!jobs.isEmpty()) {
                        dsl.transaction(c -> queue.completeAll(c.dsl(), jobs));
                    }
                    return jobs.size();
                };
            }
        };
    }

    /** A job leased by the raw claim: its id and lease token. */
    record Leased(long id, java.util.UUID leaseId) {}

    /** The raw lease claim, reading columns as the library maps them. */
    static List<Leased> rawLeaseClaim(Connection c, String worker, int batch) throws SQLException {
        return rawLeaseClaim(c, RAW_LEASE_CLAIM, worker, batch);
    }

    /** {@link #rawLeaseClaim(Connection, String, int)} with another claim statement ({@link #leaseClaim}). */
    static List<Leased> rawLeaseClaim(Connection c, String sql, String worker, int batch) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, worker);
            s.setString(2, "300 seconds");
            s.setString(3, QUEUE);
            s.setInt(4, batch);
            List<Leased> claimed = new ArrayList<>();
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    claimed.add(new Leased(rs.getLong(1), rs.getObject(16, java.util.UUID.class)));
                    rs.getString(2);
                    rs.getString(4);
                    rs.getString(5);
                    rs.getObject(7);
                    rs.getInt(9);
                    rs.getObject(12);
                    rs.getString(18);
                }
            }
            return claimed;
        }
    }

    /** Same statement as JobQueue.completeAll: ids and lease ids as two arrays. */
    static final String RAW_COMPLETE_ALL =
            "DELETE FROM jobs WHERE id = ANY(?::bigint[]) AND status = 'running' " + "AND lease_id = ANY(?::uuid[])";

    static int rawCompleteAll(Connection c, List<Leased> claimed) throws SQLException {
        Object[] ids = new Object[claimed.size()];
        Object[] leases = new Object[claimed.size()];
        for (int i = 0; i < claimed.size(); i++) {
            ids[i] = claimed.get(i).id();
            leases[i] = claimed.get(i).leaseId();
        }
        try (PreparedStatement s = c.prepareStatement(RAW_COMPLETE_ALL)) {
            s.setArray(1, c.createArrayOf("int8", ids));
            s.setArray(2, c.createArrayOf("uuid", leases));
            return s.executeUpdate();
        }
    }

    /** Enough jobs for warm-up plus duration at {@code ratePerSecond}, capped at 2 million. */
    static long prefill(BenchOptions o, long ratePerSecond) {
        double seconds = (o.warmup().toMillis() + o.duration().toMillis()) / 1000.0;
        return Math.min(2_000_000, (long) (ratePerSecond * seconds * 1.5) + 1000);
    }
}

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

    /*
     * The SQL below is the library's, written out for the plain JDBC and pgbench baselines. The
     * claim's limit is part of the text, as the library renders it (a literal, not a bind value);
     * it is an int, so writing it into the text cannot inject anything.
     */

    /** The library's claimable jobs: due, pending, and without an ordering key or the head of theirs. */
    static String claimable(int limit) {
        return "SELECT id FROM jobs WHERE queue = ? AND status = 'pending' AND run_at <= statement_timestamp() "
                + "AND (ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs earlier "
                + "WHERE earlier.queue = jobs.queue AND earlier.ordering_key = jobs.ordering_key "
                + "AND earlier.status IN ('pending', 'running') AND earlier.id < jobs.id)) "
                + "ORDER BY priority, run_at, id LIMIT " + limit + " FOR UPDATE SKIP LOCKED";
    }

    /** The claimable jobs as the library chose them before ordering keys: keys ignored. */
    static String preKeysClaimable(int limit) {
        return "SELECT id FROM jobs WHERE queue = ? AND status = 'pending' AND run_at <= statement_timestamp() "
                + "ORDER BY priority, run_at, id LIMIT " + limit + " FOR UPDATE SKIP LOCKED";
    }

    /** The library's transactional claim. */
    static String txClaim(int limit) {
        return "DELETE FROM jobs WHERE id = ANY(ARRAY(" + claimable(limit) + ")) " + RETURNING;
    }

    /** The library's leased claim (binds: worker, lease, queue). */
    static String leaseClaim(int limit) {
        return leaseClaimOf(claimable(limit));
    }

    /** The lease claim of the jobs {@code claimable} selects (binds: worker, lease, queue). */
    static String leaseClaimOf(String claimable) {
        return "UPDATE jobs SET status = 'running', locked_by = ?, "
                + "locked_until = now() + ?::interval, lease_id = gen_random_uuid(), attempts = attempts + 1, "
                + "updated_at = now() WHERE id = ANY(ARRAY("
                + claimable + ")) " + RETURNING;
    }

    /**
     * The plainest claim that does the job, for pgbench: oldest first by id, no priority, delay or
     * ordering key, and only the columns a handler needs.
     */
    static String plainTxClaim(int limit) {
        return "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE queue = 'bench' AND status = 'pending' "
                + "ORDER BY id LIMIT " + limit + " FOR UPDATE SKIP LOCKED) RETURNING id, kind, payload;\n";
    }

    /** The library's transactional claim as a pgbench script (the queue name a literal). */
    static String pgbenchTxClaim(int limit) {
        return forPgbench(txClaim(limit)) + ";\n";
    }

    /**
     * {@code claim}, a pgbench script of one statement, in the transaction a worker runs it in,
     * as PgJDBC sends it: {@code BEGIN} and the claim in one round trip (a pipeline, pgbench 14
     * and later), then {@code COMMIT} in another.
     */
    static String inTransaction(String claim) {
        return "\\startpipeline\nBEGIN;\n" + claim + "\\endpipeline\nCOMMIT;\n";
    }

    /**
     * The library's lease statements as a pgbench script: the claim (its ids and lease ids
     * gathered into two arrays with {@code \gset}), then the completion of all of them, each
     * auto-committed as the library runs them.
     */
    static String pgbenchLease(int limit) {
        return "WITH claimed AS ("
                + forPgbench(leaseClaim(limit))
                        .replaceFirst("locked_by = \\?", "locked_by = 'pgbench'")
                        .replaceFirst("\\?::interval", "'300 seconds'::interval")
                + ") SELECT coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(lease_id), '{}') AS leases "
                + "FROM claimed \\gset\n"
                + RAW_COMPLETE_ALL.replaceFirst("\\?", ":ids").replaceFirst("\\?", ":leases") + ";\n";
    }

    /**
     * The plainest lease claim and completion, for pgbench (it sets only what the table's checks
     * ask of a running row).
     */
    static String plainLease(int limit) {
        return "WITH claimed AS (UPDATE jobs SET status = 'running', locked_by = 'pgbench', lease_id = gen_random_uuid(), "
                + "locked_until = now() + interval '300 seconds' "
                + "WHERE id IN (SELECT id FROM jobs WHERE queue = 'bench' AND status = 'pending' ORDER BY id LIMIT "
                + limit + " FOR UPDATE SKIP LOCKED) RETURNING id, kind, payload) "
                + "SELECT coalesce(array_agg(id), '{}') AS ids FROM claimed \\gset\n"
                + "DELETE FROM jobs WHERE id = ANY(:ids::bigint[]);\n";
    }

    private static String forPgbench(String sql) {
        return sql.replace("queue = ?", "queue = 'bench'");
    }

    private QueueWorkloads() {}

    /** Empties the table and fills it with {@code count} due no-op jobs. */
    static void refill(DataSource ds, long count) throws SQLException {
        Jdbc.autoCommit(ds, c -> {
            Jdbc.update(c, "TRUNCATE jobs");
            // spread over the shards on Citus (all on shard 0 on one server)
            Jdbc.update(
                    c,
                    "INSERT INTO jobs (queue, kind, shard) SELECT ?, 'noop', n % ? FROM generate_series(1, ?) n",
                    QUEUE,
                    (int) Jdbc.shards(c, "jobs"),
                    count);
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
    /** What prepares a variant's run instead of its own {@code prepare}. */
    @FunctionalInterface
    interface Preparation {
        void run() throws Exception;
    }

    /** {@code variant} with {@code preparation} run before each run instead of its own. */
    static Workload.Variant preparedBy(Workload.Variant variant, Preparation preparation) {
        return new Workload.Variant() {
            @Override
            public void prepare() throws Exception {
                preparation.run();
            }

            @Override
            public Workload.Op op(int worker) {
                return variant.op(worker);
            }

            @Override
            public long verify() throws Exception {
                return variant.verify();
            }

            @Override
            public boolean stopsWhenEmpty() {
                return variant.stopsWhenEmpty();
            }
        };
    }

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

    static Workload queueTx(DataSource ds, DSLContext dsl, java.util.Optional<PgBench> pgbench) {
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
                        Case c = Workload.inEveryMode(
                                "batch=" + batch,
                                workers,
                                "jobs/s",
                                dsl,
                                library -> txLibrary(ds, library, new JobQueue(library), prefill, claim, false),
                                txRaw(ds, prefill, batch, false));
                        // pgbench runs faster than the JVM clients: give it three times the jobs
                        Workload.Variant deeper = txRaw(ds, prefill * 3, batch, false);
                        cases.add(pgbench.map(p -> c.withPgbench(
                                        p.variant(deeper, ds, pgbenchTxClaim(batch), workers, o, 0),
                                        p.variant(deeper, ds, plainTxClaim(batch), workers, o, 0)))
                                .orElse(c));
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
                    try (PreparedStatement s = c.prepareStatement(txClaim(batch))) {
                        s.setString(1, QUEUE);
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

    static Workload queueLease(DataSource ds, DSLContext dsl, java.util.Optional<PgBench> pgbench) {
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
                        Variant raw = rawLease(ds, prefill, batch);
                        Variant deeper = rawLease(ds, prefill * 3, batch);
                        Case c = Workload.inEveryMode(
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
                                raw);
                        cases.add(pgbench.map(p -> c.withPgbench(
                                        p.variant(deeper, ds, pgbenchLease(batch), workers, o, 0),
                                        p.variant(deeper, ds, plainLease(batch), workers, o, 0)))
                                .orElse(c));
                    }
                }
                return cases;
            }
        };
    }

    /** Leased claims of {@code batch} and their completion, in plain JDBC. */
    static Workload.Variant rawLease(DataSource ds, long prefill, int batch) {
        return new Prefilled(ds, prefill) {
            @Override
            public Workload.Op op(int worker) {
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
        return rawLeaseClaim(c, leaseClaim(batch), worker);
    }

    /** {@link #rawLeaseClaim(Connection, String, int)} with another claim statement ({@link #leaseClaimOf}). */
    static List<Leased> rawLeaseClaim(Connection c, String sql, String worker) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, worker);
            s.setString(2, "300 seconds");
            s.setString(3, QUEUE);
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
        Long[] ids = new Long[claimed.size()];
        Object[] leases = new Object[claimed.size()];
        for (int i = 0; i < claimed.size(); i++) {
            ids[i] = claimed.get(i).id();
            leases[i] = claimed.get(i).leaseId();
        }
        try (PreparedStatement s = c.prepareStatement(RAW_COMPLETE_ALL)) {
            // as the library binds them: the ids in binary (PgJDBC sends a Long[] given to
            // setObject so), the lease ids as text (PgJDBC has no binary uuid[])
            s.setObject(1, ids);
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

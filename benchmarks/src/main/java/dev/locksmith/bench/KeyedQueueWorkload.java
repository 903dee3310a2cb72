package dev.locksmith.bench;

import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.JobQueue;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/**
 * queue-keyed: leased claims with batched completion (as queue-lease) of jobs spread at random
 * over {@value #KEYS} ordering keys, and of the same number of jobs without keys, in one run:
 * the {@code keys=1000} row's library median over the {@code keys=none} row's is what per-key
 * ordering costs a queue that uses it. Each row's raw variant runs the same SQL through plain
 * JDBC, except in the {@code sql=pre-keys} row, whose raw variant runs the claim as it was before
 * ordering keys (no key clause) on jobs without keys: its lib/raw, beside the {@code keys=none}
 * row's, is what the key clause costs a queue that has no keys.
 */
final class KeyedQueueWorkload implements Workload {

    static final int KEYS = 1000;

    private final DataSource ds;
    private final DSLContext dsl;

    KeyedQueueWorkload(DataSource ds, DSLContext dsl) {
        this.ds = ds;
        this.dsl = dsl;
    }

    @Override
    public String name() {
        return "queue-keyed";
    }

    @Override
    public List<Case> cases(BenchOptions o) {
        Duration lease = Duration.ofMinutes(5);
        JobQueue queue = new JobQueue(dsl);
        List<Case> cases = new ArrayList<>();
        for (int batch : o.quick() ? List.of(10) : List.of(1, 10, 100)) {
            for (int workers : o.workersOr(List.of(4))) {
                long prefill = QueueWorkloads.prefill(o, batch == 1 ? 8_000 : batch == 10 ? 40_000 : 80_000);
                Claim claim = Claim.of(QueueWorkloads.QUEUE, batch);
                String config = " batch=" + batch;
                cases.add(new Case(
                        "keys=" + KEYS + config,
                        workers,
                        "jobs/s",
                        keyed(QueueWorkloads.leaseLibrary(ds, dsl, queue, prefill, claim, lease), prefill),
                        keyed(raw(prefill, batch, QueueWorkloads.leaseClaim(batch)), prefill)));
                cases.add(new Case(
                        "keys=none" + config,
                        workers,
                        "jobs/s",
                        QueueWorkloads.leaseLibrary(ds, dsl, queue, prefill, claim, lease),
                        raw(prefill, batch, QueueWorkloads.leaseClaim(batch))));
                if (batch == 10 && !o.quick()) {
                    cases.add(new Case(
                            "keys=none" + config + " sql=pre-keys",
                            workers,
                            "jobs/s",
                            QueueWorkloads.leaseLibrary(ds, dsl, queue, prefill, claim, lease),
                            raw(prefill, batch, QueueWorkloads.leaseClaimOf(QueueWorkloads.preKeysClaimable(batch)))));
                }
            }
        }
        return cases;
    }

    /** The raw leased claim {@code sql} with batched completion, as queue-lease's raw variant. */
    private Variant raw(long prefill, int batch, String sql) {
        return new QueueWorkloads.Prefilled(ds, prefill) {
            @Override
            public Op op(int worker) {
                String me = "raw-" + worker;
                return () -> {
                    List<QueueWorkloads.Leased> claimed =
                            Jdbc.autoCommit(ds, c -> QueueWorkloads.rawLeaseClaim(c, sql, me));
                    if (!claimed.isEmpty()) {
                        Jdbc.inTransaction(ds, c -> QueueWorkloads.rawCompleteAll(c, claimed));
                    }
                    return claimed.size();
                };
            }
        };
    }

    /** {@code variant} on a queue whose jobs have {@value #KEYS} ordering keys. */
    private Variant keyed(Variant variant, long prefill) {
        return QueueWorkloads.preparedBy(variant, () -> refillKeyed(ds, prefill));
    }

    /**
     * Empties the table and fills it with {@code count} due no-op jobs, each with one of
     * {@value #KEYS} keys drawn at random (seeded, so every run gets the same sequence).
     */
    static void refillKeyed(DataSource ds, long count) throws SQLException {
        Jdbc.autoCommit(ds, c -> {
            Jdbc.update(c, "TRUNCATE jobs");
            try (var seed = c.createStatement()) {
                seed.execute("SELECT setseed(0.16)");
            }
            Jdbc.update(
                    c,
                    "INSERT INTO jobs (queue, kind, ordering_key) SELECT ?, 'noop', 'key-' || floor(random() * ?)::int "
                            + "FROM generate_series(1, ?)",
                    QueueWorkloads.QUEUE,
                    KEYS,
                    count);
            Jdbc.update(c, "ANALYZE jobs");
            return null;
        });
    }
}

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
 * queue-limited: what concurrency limits per key cost the claim. Leased claims with batched
 * completion (as queue-lease) of jobs spread at random over {@value #KEYS} concurrency keys, with
 * the queue's default limit per key set to {@value #LIMIT} (the library column: the keyed claim,
 * its walk over the keys, slot locks and second look) and with no limit at all (the raw column,
 * which here is <b>not</b> plain JDBC: the library's claim of the same jobs, whose keys then count
 * for nothing). Both run in the same run, alternated: lib/raw is the limited queue's share of the
 * unlimited one's throughput (issue 34's target: at least 0.7 at 100 keys with limit 4). With
 * jobs completed as soon as they are claimed, the limits rarely bind: the figure is the claim's
 * own price. A second case prices a rate limit that does not bind either: the same limit and a
 * default rate of {@value #RATE} starts per second per key (the library column: each claim also
 * takes its keys' rate locks, reads their starts and records its own in {@code job_key_starts})
 * against the limit alone (the raw column).
 */
final class LimitedQueueWorkload implements Workload {

    static final int KEYS = 100;
    static final int LIMIT = 4;

    /** The default rate of the rated case, per key per second: far above what a key starts here. */
    static final int RATE = 10_000;

    private final DataSource ds;
    private final DSLContext dsl;

    LimitedQueueWorkload(DataSource ds, DSLContext dsl) {
        this.ds = ds;
        this.dsl = dsl;
    }

    @Override
    public String name() {
        return "queue-limited";
    }

    @Override
    public List<Case> cases(BenchOptions o) {
        Duration lease = Duration.ofMinutes(5);
        // a queue object per variant: each looks up whether the queue has limits at most once a
        // second, and a variant's runs are further apart than that
        JobQueue limited = new JobQueue(dsl);
        JobQueue unlimited = new JobQueue(dsl);
        JobQueue rated = new JobQueue(dsl);
        JobQueue limitedOnly = new JobQueue(dsl);
        List<Case> cases = new ArrayList<>();
        for (int batch : o.quick() ? List.of(10) : List.of(1, 10)) {
            for (int workers : o.workersOr(List.of(4))) {
                long prefill = QueueWorkloads.prefill(o, batch == 1 ? 8_000 : 40_000);
                Claim claim = Claim.of(QueueWorkloads.QUEUE, batch);
                cases.add(new Case(
                        "keys=" + KEYS + " limit=" + LIMIT + " vs none, batch=" + batch,
                        workers,
                        "jobs/s",
                        keyed(QueueWorkloads.leaseLibrary(ds, dsl, limited, prefill, claim, lease), prefill, LIMIT, 0),
                        keyed(QueueWorkloads.leaseLibrary(ds, dsl, unlimited, prefill, claim, lease), prefill, 0, 0)));
                cases.add(new Case(
                        "keys=" + KEYS + " limit=" + LIMIT + " rate=" + RATE + "/s vs limit only, batch=" + batch,
                        workers,
                        "jobs/s",
                        keyed(QueueWorkloads.leaseLibrary(ds, dsl, rated, prefill, claim, lease), prefill, LIMIT, RATE),
                        keyed(
                                QueueWorkloads.leaseLibrary(ds, dsl, limitedOnly, prefill, claim, lease),
                                prefill,
                                LIMIT,
                                0)));
            }
        }
        return cases;
    }

    /**
     * {@code variant} on a queue whose jobs have {@value #KEYS} concurrency keys, limited to
     * {@code limit} (0: none) and to {@code rate} starts per second per key (0: none).
     */
    private Variant keyed(Variant variant, long prefill, int limit, int rate) {
        return QueueWorkloads.preparedBy(variant, () -> refill(ds, prefill, limit, rate));
    }

    /**
     * Empties the table and fills it with {@code count} due no-op jobs, each with one of
     * {@value #KEYS} concurrency keys drawn at random (seeded), and sets the queue's limit and
     * rate (with no starts recorded).
     */
    private static void refill(DataSource ds, long count, int limit, int rate) throws SQLException {
        Jdbc.autoCommit(ds, c -> {
            Jdbc.update(c, "TRUNCATE jobs");
            Jdbc.update(c, "DELETE FROM job_concurrency_limits");
            Jdbc.update(c, "DELETE FROM job_key_starts");
            try (var seed = c.createStatement()) {
                seed.execute("SELECT setseed(0.34)");
            }
            Jdbc.update(
                    c,
                    "INSERT INTO jobs (queue, kind, concurrency_key) "
                            + "SELECT ?, 'noop', 'tenant-' || floor(random() * ?)::int FROM generate_series(1, ?)",
                    QueueWorkloads.QUEUE,
                    KEYS,
                    count);
            if (limit > 0 && rate > 0) {
                Jdbc.update(
                        c,
                        "INSERT INTO job_concurrency_limits (queue, concurrency_key, max_running, max_starts, window_micros)"
                                + " VALUES (?, '', ?, ?, 1000000)",
                        QueueWorkloads.QUEUE,
                        limit,
                        rate);
            } else if (limit > 0) {
                Jdbc.update(
                        c,
                        "INSERT INTO job_concurrency_limits (queue, concurrency_key, max_running) VALUES (?, '', ?)",
                        QueueWorkloads.QUEUE,
                        limit);
            }
            Jdbc.update(c, "ANALYZE jobs");
            return null;
        });
    }
}

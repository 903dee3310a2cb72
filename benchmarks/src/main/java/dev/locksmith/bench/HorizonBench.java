package dev.locksmith.bench;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * {@code bench horizon}: the held-horizon scenario of issue 32. A producer at a fixed rate in
 * batches feeds a default {@code JobWorker} and, beside it, a plain {@code DELETE ... SKIP LOCKED}
 * queue on one table and the same on rotating tables ({@link HorizonRotating}); the channel-account pool acquires and releases at a fixed rate on its migrated layout
 * (and, when that has no index over its lease columns, on a copy with them), and, when asked, a
 * prototype whose leases are rows in rotating tables ({@link HorizonPoolRotating}). All run through three phases: a
 * baseline, a hold (another session holds {@code BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1}
 * open, so VACUUM and page pruning can remove nothing newer) and an after phase.
 *
 * <p>Every 5 s the bench VACUUMs the plain queue's table and both pool tables (the
 * {@code JobWorker} VACUUMs its own table as often), so that a server with autovacuum off does not
 * leave them to bloat; on a server with autovacuum on, autovacuum runs as well.
 */
public final class HorizonBench {

    /** Unmeasured time between starting the loads and the baseline. */
    public static final Duration WARM_UP = Duration.ofSeconds(5);

    /** The phases, in order. */
    public static final List<String> PHASES = List.of("baseline", "held horizon", "after");

    /** What to run. */
    public record Options(
            Duration baseline,
            Duration hold,
            Duration after,
            int rate,
            int batch,
            int poolAccounts,
            int poolRate,
            long generationMillis,
            boolean queues,
            boolean pool,
            boolean transactional,
            boolean poolPrototype) {
        /**
         * Validates: positive phase lengths, rates and generation, a batch of at most the rate,
         * at least one kind of load.
         */
        public Options {
            for (Duration d : List.of(baseline, hold, after)) {
                if (d.isNegative() || d.isZero()) {
                    throw new IllegalArgumentException("phase lengths must be positive");
                }
            }
            if (rate < 1 || batch < 1 || batch > rate || poolAccounts < 1 || poolRate < 1 || generationMillis < 1) {
                throw new IllegalArgumentException(
                        "rate, batch (at most rate), pool accounts, pool rate and generation must be positive");
            }
            if (!queues && !pool && !transactional && !poolPrototype) {
                throw new IllegalArgumentException(
                        "--loads takes queues, pool, transactional, pool-prototype or several");
            }
        }

        Duration length(int phase) {
            return List.of(baseline, hold, after).get(phase);
        }
    }

    /** One load in one phase. */
    public record Row(
            String load,
            String phase,
            double perSecond,
            double minPerSecond,
            long backlogGrowth,
            long deadTuplesAtEnd,
            long sizeGrowthBytes,
            long indexGrowthBytes,
            double medianMillis,
            double p90Millis,
            int timed,
            String timedWhat,
            long failures) {}

    private final DataSource ds;
    private final DSLContext dsl;
    private final String schema;
    private final Options options;

    /**
     * @param ds connections to the migrated scratch database
     * @param dsl the bench's {@code DSLContext} on it
     * @param schema locksmith's schema there
     */
    public HorizonBench(DataSource ds, DSLContext dsl, String schema, Options options) {
        this.ds = ds;
        this.dsl = dsl;
        this.schema = schema;
        this.options = options;
    }

    /**
     * Runs the three phases with every load, and returns a row per load and phase.
     *
     * @param progress told at each phase
     * @param heldBy the JDBC connection that holds the horizon, opened by the caller (not from
     *     the pool); it is rolled back and closed here, whatever happens
     */
    public List<Row> run(Consumer<String> progress, Connection heldBy) throws Exception {
        int phases = PHASES.size();
        List<HorizonLoad> loads = new ArrayList<>();
        ScheduledExecutorService ticker = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "horizon-ticker");
            t.setDaemon(true);
            return t;
        });
        try (heldBy) {
            if (options.transactional()) {
                loads.add(new HorizonQueues.Library(ds, schema, options.rate(), options.batch(), phases, true));
            }
            if (options.queues()) {
                loads.add(new HorizonQueues.Library(ds, schema, options.rate(), options.batch(), phases, false));
            }
            if (options.queues() || options.transactional()) {
                loads.add(new HorizonQueues.Plain(ds, schema, options.rate(), options.batch(), phases));
            }
            if (options.queues()) {
                loads.add(new HorizonRotating(
                        ds, schema, options.rate(), options.batch(), options.generationMillis(), phases));
            }
            if (options.pool()) {
                loads.add(new HorizonPool(ds, schema, options.poolAccounts(), options.poolRate(), phases));
            }
            if (options.poolPrototype()) {
                loads.add(new HorizonPoolRotating(
                        ds, schema, options.poolAccounts(), options.poolRate(), options.generationMillis(), phases));
            }
            for (HorizonLoad load : loads) {
                load.start();
            }
            long[] lastDone = new long[loads.size()];
            ticker.scheduleAtFixedRate(
                    () -> {
                        for (int i = 0; i < loads.size(); i++) {
                            long now = loads.get(i).done.get();
                            loads.get(i).times().second(now - lastDone[i]);
                            lastDone[i] = now;
                        }
                    },
                    1,
                    1,
                    TimeUnit.SECONDS);
            ticker.scheduleWithFixedDelay(() -> vacuum(loads), 5, 5, TimeUnit.SECONDS);
            // the loads settle (connections, the JIT, the worker's first claims) before the baseline
            progress.accept("horizon: warming up, " + WARM_UP.toSeconds() + " s");
            Thread.sleep(WARM_UP.toMillis());
            List<Row> rows = new ArrayList<>();
            long[][] start = snapshot(loads);
            for (int phase = 0; phase < phases; phase++) {
                progress.accept("horizon: " + PHASES.get(phase) + ", "
                        + options.length(phase).toSeconds() + " s");
                for (HorizonLoad load : loads) {
                    load.times().phase(phase);
                }
                if (phase == 1) {
                    hold(heldBy);
                }
                Thread.sleep(options.length(phase).toMillis());
                if (phase == 1) {
                    heldBy.rollback();
                }
                long[][] end = snapshot(loads);
                for (int i = 0; i < loads.size(); i++) {
                    rows.add(row(loads.get(i), phase, start[i], end[i]));
                }
                start = end;
            }
            return rows;
        } finally {
            ticker.shutdownNow();
            for (HorizonLoad load : loads) {
                load.close();
            }
        }
    }

    /**
     * Opens the transaction that holds the horizon: REPEATABLE READ takes its snapshot at the
     * first statement and keeps it until the transaction ends, so no row version that snapshot
     * might see can be removed. A timeout of the session's own ends it should this process hang.
     */
    private void hold(Connection c) throws SQLException {
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        long limit = options.hold().toMillis() + 60_000;
        try (var s = c.prepareStatement("SELECT set_config('idle_in_transaction_session_timeout', ?, true)")) {
            s.setString(1, Long.toString(limit));
            s.execute();
        }
        try (var s = c.createStatement()) {
            s.execute("SELECT 1");
        }
    }

    private void vacuum(List<HorizonLoad> loads) {
        for (HorizonLoad load : loads) {
            if (load instanceof HorizonQueues.Library) {
                continue;
            }
            for (String table : load.tables()) {
                try {
                    dsl.execute("VACUUM {0}", DSL.table(DSL.name(table.split("\\."))));
                } catch (RuntimeException e) {
                    load.failures.incrementAndGet();
                }
            }
        }
    }

    /** Per load: produced, done, total size in bytes, dead tuples, size of the indexes in bytes. */
    private long[][] snapshot(List<HorizonLoad> loads) throws SQLException {
        long[][] values = new long[loads.size()][];
        for (int i = 0; i < loads.size(); i++) {
            HorizonLoad load = loads.get(i);
            long size = 0;
            long dead = 0;
            long indexes = 0;
            for (String table : load.tables()) {
                size += Jdbc.autoCommit(
                        ds, c -> Jdbc.queryLong(c, Jdbc.overPartitions("pg_total_relation_size"), table, table));
                dead += Jdbc.autoCommit(
                        ds, c -> Jdbc.queryLong(c, Jdbc.overPartitions("pg_stat_get_dead_tuples"), table, table));
                indexes += Jdbc.autoCommit(
                        ds, c -> Jdbc.queryLong(c, Jdbc.overPartitions("pg_indexes_size"), table, table));
            }
            values[i] = new long[] {load.produced.get(), load.done.get(), size, dead, indexes};
        }
        return values;
    }

    private static Row row(HorizonLoad load, int phase, long[] start, long[] end) {
        double[] rate = load.times().rate(phase);
        long backlog = (end[0] - end[1]) - (start[0] - start[1]);
        return new Row(
                load.label(),
                PHASES.get(phase),
                rate[0],
                rate[1],
                load.hasBacklog() ? backlog : 0,
                end[3],
                end[2] - start[2],
                end[4] - start[4],
                load.times().medianMillis(phase),
                load.times().p90Millis(phase),
                load.times().timed(phase),
                load.timed(),
                load.failures.get());
    }
}

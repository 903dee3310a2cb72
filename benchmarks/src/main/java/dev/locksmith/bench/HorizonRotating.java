package dev.locksmith.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * A plain queue on rotating tables, PgQ's answer to a held horizon, run beside the single-table
 * queue to price the storage issue 32 asks for before the library adopts it: {@link #TABLES}
 * tables share one id sequence; producers insert into the current generation's table; every
 * generation (a fixed time) the next table becomes current once it is empty; consumers DELETE
 * from the tables oldest generation first; a table that is no longer current and holds no job is
 * emptied by {@code TRUNCATE}, which no snapshot can hold back. Dead tuples are so bounded by the
 * jobs of about one generation, whatever holds the horizon.
 *
 * <p>The truncation takes the table's ACCESS EXCLUSIVE lock with a short {@code lock_timeout},
 * checks under it that the table is empty (a producer that read the old generation may have
 * committed into it since), and only then truncates: a job is never emptied away. A producer
 * that inserts after the truncation (it read the generation before the rotation) leaves a job the
 * consumers still find, since they read every table.
 */
final class HorizonRotating extends HorizonLoad {

    /** Tables in the rotation: the current one, the one draining, and room to skip a busy one. */
    static final int TABLES = 4;

    /** How often the rotator looks at the tables. */
    private static final long TICK_NANOS = 50_000_000;

    private final DataSource ds;
    private final List<String> tables = new ArrayList<>();
    /** {@link #tables}, quoted for the statements. */
    private final List<String> quoted = new ArrayList<>();

    private final int rate;
    private final int batch;
    private final long generationNanos;
    /** The current generation; its table is {@code generation % TABLES}. */
    private final AtomicLong generation = new AtomicLong();
    /** Per table: the generation it last held, or -1 once it is truncated (empty, ready to be current). */
    private final AtomicLongArray heldGeneration = new AtomicLongArray(TABLES);
    /** Tables truncated. */
    final AtomicLong truncations = new AtomicLong();
    /** Truncations given up for the lock or for jobs still in the table. */
    final AtomicLong truncationsDeferred = new AtomicLong();

    private final List<Thread> threads = new ArrayList<>();

    HorizonRotating(DataSource ds, String schema, int rate, int batch, long generationMillis, int phases)
            throws Exception {
        super(phases);
        this.ds = ds;
        this.rate = rate;
        this.batch = batch;
        this.generationNanos = generationMillis * 1_000_000;
        String sequence = DSL.using(SQLDialect.POSTGRES).render(DSL.name(schema, "horizon_rotating_id"));
        List<String> ddl = new ArrayList<>();
        for (int i = 0; i < TABLES; i++) {
            String name = "horizon_rotating_" + i;
            tables.add(schema + "." + name);
            quoted.add(DSL.using(SQLDialect.POSTGRES).render(DSL.name(schema, name)));
            ddl.add("DROP TABLE IF EXISTS " + quoted.get(i));
            heldGeneration.set(i, i == 0 ? 0 : -1);
        }
        ddl.add("DROP SEQUENCE IF EXISTS " + sequence);
        ddl.add("CREATE SEQUENCE " + sequence);
        for (String table : quoted) {
            ddl.add(
                    "CREATE TABLE " + table + " (id bigint PRIMARY KEY DEFAULT nextval("
                            + DSL.using(SQLDialect.POSTGRES).render(DSL.inline(sequence))
                            + "::regclass), payload jsonb NOT NULL DEFAULT '{}', created_at timestamptz NOT NULL DEFAULT now())");
        }
        Jdbc.autoCommit(ds, c -> {
            for (String statement : ddl) {
                Jdbc.update(c, statement);
            }
            return null;
        });
    }

    @Override
    String label() {
        return "plain rotating tables, " + TABLES + " x " + generationNanos / 1_000_000 + " ms, " + batch + " per tx";
    }

    @Override
    String timed() {
        return "the consumer's DELETEs until one finds jobs (oldest table first)";
    }

    @Override
    List<String> tables() {
        return tables;
    }

    @Override
    boolean hasBacklog() {
        return true;
    }

    @Override
    void start() {
        List<String> inserts = new ArrayList<>();
        List<String> claims = new ArrayList<>();
        String limit = DSL.using(SQLDialect.POSTGRES).render(DSL.inline(batch));
        for (String table : quoted) {
            inserts.add("INSERT INTO " + table + " (payload) SELECT '{}'::jsonb FROM generate_series(1, ?)");
            claims.add("DELETE FROM " + table + " WHERE id IN (SELECT id FROM " + table + " ORDER BY id LIMIT " + limit
                    + " FOR UPDATE SKIP LOCKED) RETURNING id");
        }
        threads.add(paced("horizon-rotating-producer", Math.max(1, rate / batch), () -> {
            int table = (int) (generation.get() % TABLES);
            Jdbc.autoCommit(ds, c -> Jdbc.update(c, inserts.get(table), batch));
            produced.addAndGet(batch);
        }));
        for (int i = 0; i < HorizonQueues.PLAIN_THREADS; i++) {
            Thread t = new Thread(() -> consume(claims), "horizon-rotating-" + i);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        Thread rotator = new Thread(this::rotate, "horizon-rotator");
        rotator.setDaemon(true);
        rotator.start();
        threads.add(rotator);
    }

    private void consume(List<String> claims) {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(true);
            List<PreparedStatement> statements = new ArrayList<>();
            for (String claim : claims) {
                statements.add(c.prepareStatement(claim));
            }
            consumeUntilStopped(() -> {
                long current = generation.get();
                int n = 0;
                // oldest generation first, so that a table drains and can be truncated
                for (long g = Math.max(0, current - TABLES + 1); g <= current && n == 0; g++) {
                    int table = (int) (g % TABLES);
                    if (heldGeneration.get(table) != g) {
                        continue; // truncated: empty, but for a producer's late insert, found once it is current again
                    }
                    n = HorizonQueues.rows(statements.get(table));
                }
                return n;
            });
        } catch (Exception e) {
            failures.incrementAndGet();
        }
    }

    /** Every tick: truncates the drained tables, and moves to the next generation once one is due. */
    private void rotate() {
        long started = System.nanoTime();
        while (!stop.get()) {
            LockSupport.parkNanos(TICK_NANOS);
            try {
                long current = generation.get();
                for (int i = 0; i < TABLES; i++) {
                    long held = heldGeneration.get(i);
                    if (held >= 0 && held != current) {
                        if (truncateIfEmpty(i)) {
                            heldGeneration.set(i, -1);
                            truncations.incrementAndGet();
                        } else {
                            truncationsDeferred.incrementAndGet();
                        }
                    }
                }
                int next = (int) ((current + 1) % TABLES);
                if (System.nanoTime() - started >= generationNanos && heldGeneration.get(next) < 0) {
                    heldGeneration.set(next, current + 1);
                    generation.set(current + 1);
                    started = System.nanoTime();
                }
            } catch (SQLException e) {
                failures.incrementAndGet();
            }
        }
    }

    /** Truncates table {@code i} if, under its ACCESS EXCLUSIVE lock, it holds no row. */
    private boolean truncateIfEmpty(int i) throws SQLException {
        return Jdbc.inTransaction(ds, c -> {
            try (Statement s = c.createStatement()) {
                s.execute("SELECT set_config('lock_timeout', '20ms', true)");
                try {
                    s.execute("LOCK TABLE " + quoted.get(i) + " IN ACCESS EXCLUSIVE MODE");
                } catch (SQLException busy) {
                    if ("55P03".equals(busy.getSQLState())) {
                        c.rollback();
                        return false;
                    }
                    throw busy;
                }
                try (ResultSet r = s.executeQuery("SELECT EXISTS (SELECT 1 FROM " + quoted.get(i) + ")")) {
                    r.next();
                    if (r.getBoolean(1)) {
                        return false;
                    }
                }
                s.execute("TRUNCATE " + quoted.get(i));
                return true;
            }
        });
    }

    @Override
    public void close() throws Exception {
        join(threads);
        System.err.printf(
                "horizon: rotating tables: %d generations, %d truncations, %d deferred (jobs left or lock busy)%n",
                generation.get() + 1, truncations.get(), truncationsDeferred.get());
    }
}

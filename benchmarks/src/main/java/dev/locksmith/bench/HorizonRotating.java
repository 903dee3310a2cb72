package dev.locksmith.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * A plain queue on rotating tables, PgQ's answer to a held horizon, run beside the single-table
 * queue to price the storage issue 32 asks for before the library adopted it: the
 * {@link Rotation}'s tables share one id sequence; producers insert into the current generation's
 * table; consumers DELETE from the tables oldest generation first.
 */
final class HorizonRotating extends HorizonLoad {

    private final DataSource ds;
    private final List<String> tables = new ArrayList<>();
    /** {@link #tables}, quoted for the statements. */
    private final List<String> quoted = new ArrayList<>();

    private final int rate;
    private final int batch;
    private final Rotation rotation;

    private final List<Thread> threads = new ArrayList<>();

    HorizonRotating(DataSource ds, String schema, int rate, int batch, long generationMillis, int phases)
            throws Exception {
        super(phases);
        this.ds = ds;
        this.rate = rate;
        this.batch = batch;
        String sequence = DSL.using(SQLDialect.POSTGRES).render(DSL.name(schema, "horizon_rotating_id"));
        List<String> ddl = new ArrayList<>();
        for (int i = 0; i < Rotation.TABLES; i++) {
            String name = "horizon_rotating_" + i;
            tables.add(schema + "." + name);
            quoted.add(DSL.using(SQLDialect.POSTGRES).render(DSL.name(schema, name)));
            ddl.add("DROP TABLE IF EXISTS " + quoted.get(i));
        }
        this.rotation = new Rotation(ds, quoted, generationMillis);
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
        return "plain rotating tables, " + Rotation.TABLES + " x " + rotation.generationMillis() + " ms, " + batch
                + " per tx";
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
            int table = Rotation.table(rotation.generation());
            Jdbc.autoCommit(ds, c -> Jdbc.update(c, inserts.get(table), batch));
            produced.addAndGet(batch);
        }));
        for (int i = 0; i < HorizonQueues.PLAIN_THREADS; i++) {
            Thread t = new Thread(() -> consume(claims), "horizon-rotating-" + i);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        Thread rotator = new Thread(() -> rotation.run(stop, failures), "horizon-rotator");
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
                long current = rotation.generation();
                int n = 0;
                // oldest generation first, so that a table drains and can be truncated
                for (long g = Math.max(0, current - Rotation.TABLES + 1); g <= current && n == 0; g++) {
                    if (!rotation.holds(g)) {
                        continue; // truncated: empty, but for a producer's late insert, found once it is current again
                    }
                    n = HorizonQueues.rows(statements.get(Rotation.table(g)));
                }
                return n;
            });
        } catch (Exception e) {
            failures.incrementAndGet();
        }
    }

    @Override
    public void close() throws Exception {
        join(threads);
        System.err.println("horizon: rotating tables: " + rotation.summary());
    }
}

package dev.locksmith.bench;

import dev.locksmith.Locksmith;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * The pool of {@link HorizonBench}: {@code acquire} then {@code release} in a transaction of its
 * own, through the public API, at a fixed rate; the timed statement is {@code acquire}. With
 * {@link #withIndexesOverLeases}, a copy of the table in a schema of its own gets back the
 * layout before change set {@code pool-007} (partial indexes over {@code locked_until}, pages
 * filled to 100%), so that both layouts run side by side in one run under the same statements.
 */
final class HorizonPool extends HorizonLoad {

    static final String TABLE = "channel_accounts";
    /**
     * Threads sharing the offered rate: one cycle is two commits (the acquisition auto-commits,
     * the release commits with its transaction), a few ms with {@code fsync} on, so one thread
     * alone could not offer 200 a second.
     */
    static final int THREADS = 4;

    private final DataSource ds;
    private final String schema;
    private final int accounts;
    private final int rate;
    private final String layout;
    private final AtomicLong owners = new AtomicLong();
    final AtomicLong empty = new AtomicLong();
    private final List<Thread> threads = new ArrayList<>();

    private HorizonPool(DataSource ds, String schema, int accounts, int rate, String layout, int phases) {
        super(phases);
        this.ds = ds;
        this.schema = schema;
        this.accounts = accounts;
        this.rate = rate;
        this.layout = layout;
    }

    /** The pool on the migrated schema as it is; the label says whether an index names a lease column. */
    static HorizonPool asMigrated(DataSource ds, String schema, int accounts, int rate, int phases) throws Exception {
        return new HorizonPool(ds, schema, accounts, rate, describe(ds, schema), phases);
    }

    /**
     * The pool on a copy of {@code schema}'s table in {@code copySchema} (made afresh), with the
     * indexes over lease state and the fillfactor that change set {@code pool-007} removed.
     */
    static HorizonPool withIndexesOverLeases(
            DataSource ds, DSLContext dsl, String schema, String copySchema, int accounts, int rate, int phases)
            throws Exception {
        var original = DSL.table(DSL.name(schema, TABLE));
        var copy = DSL.table(DSL.name(copySchema, TABLE));
        dsl.execute("DROP SCHEMA IF EXISTS {0} CASCADE", DSL.name(copySchema));
        dsl.execute("CREATE SCHEMA {0}", DSL.name(copySchema));
        dsl.execute("CREATE TABLE {0} (LIKE {1} INCLUDING ALL)", copy, original);
        dsl.execute(
                "CREATE INDEX IF NOT EXISTS channel_accounts_idle_idx ON {0} (slot) WHERE locked_until IS NULL", copy);
        dsl.execute(
                "CREATE INDEX IF NOT EXISTS channel_accounts_lease_expiry_idx ON {0} (locked_until)"
                        + " WHERE locked_until IS NOT NULL",
                copy);
        dsl.execute(
                "ALTER TABLE {0} SET (fillfactor = 100, autovacuum_vacuum_scale_factor = 0,"
                        + " autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_cost_delay = 0)",
                copy);
        return new HorizonPool(ds, copySchema, accounts, rate, describe(ds, copySchema), phases);
    }

    /** The layout as the catalog has it: the fillfactor, and whether an index names {@code locked_until}. */
    private static String describe(DataSource ds, String schema) throws Exception {
        return Jdbc.autoCommit(ds, c -> {
            long leaseIndexes = Jdbc.queryLong(
                    c,
                    "SELECT count(*) FROM pg_indexes WHERE schemaname = ? AND tablename = ? AND indexdef LIKE ?",
                    schema,
                    TABLE,
                    "%locked_until%");
            long fillfactor = Jdbc.queryLong(
                    c,
                    "SELECT coalesce((SELECT substr(o, 12)::int FROM unnest(reloptions) o WHERE o LIKE 'fillfactor=%'), 100)"
                            + " FROM pg_class WHERE oid = to_regclass(?)",
                    schema + "." + TABLE);
            return (leaseIndexes == 0 ? "no index over leases" : leaseIndexes + " indexes over leases")
                    + ", fillfactor " + fillfactor;
        });
    }

    @Override
    String label() {
        return "pool, " + accounts + " accounts, " + layout;
    }

    @Override
    String timed() {
        return "ChannelAccountPool.acquire";
    }

    @Override
    List<String> tables() {
        return List.of(schema + "." + TABLE);
    }

    @Override
    boolean hasBacklog() {
        return false;
    }

    @Override
    void start() {
        Locksmith locksmith = Locksmith.builder(ds).schema(schema).build();
        ChannelAccountPool pool = new ChannelAccountPool(locksmith);
        DSLContext dsl = locksmith.dsl();
        List<String> keys = IntStream.range(0, accounts)
                .mapToObj(i -> String.format("G%055d", i))
                .toList();
        for (int from = 0; from < keys.size(); from += 10_000) {
            pool.register(dsl, keys.subList(from, Math.min(keys.size(), from + 10_000)));
        }
        dsl.execute("VACUUM ANALYZE {0}", DSL.table(DSL.name(schema, TABLE)));
        for (int i = 0; i < THREADS; i++) {
            threads.add(paced("horizon-pool-" + schema + "-" + i, Math.max(1, rate / THREADS), () -> cycle(pool, dsl)));
        }
    }

    private void cycle(ChannelAccountPool pool, DSLContext dsl) {
        String owner = "horizon-" + owners.incrementAndGet();
        long begin = System.nanoTime();
        Optional<ChannelAccount> account = pool.acquire(Duration.ofSeconds(30), owner);
        times().time(System.nanoTime() - begin);
        if (account.isEmpty()) {
            empty.incrementAndGet();
            return;
        }
        String key = account.get().publicKey();
        dsl.transaction(c -> pool.release(c.dsl(), key, owner));
        done.incrementAndGet();
    }

    @Override
    public void close() throws Exception {
        join(threads);
    }
}

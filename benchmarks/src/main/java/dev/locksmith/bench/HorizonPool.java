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
 * own, through the public API, at a fixed rate; the timed statement is {@code acquire}. When the
 * migrated table has no index over its lease columns (a layout whose acquire and release are
 * heap-only updates, under trial), {@link #withIndexesOverLeases} makes a copy of the table in a
 * schema of its own with the partial indexes over {@code locked_until} and pages filled to 100%,
 * so that both layouts run side by side in one run under the same statements.
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
    private final boolean leasesIndexed;
    private final AtomicLong owners = new AtomicLong();
    final AtomicLong empty = new AtomicLong();
    private final List<Thread> threads = new ArrayList<>();

    private HorizonPool(DataSource ds, String schema, int accounts, int rate, int phases) throws Exception {
        super(phases);
        this.ds = ds;
        this.schema = schema;
        this.accounts = accounts;
        this.rate = rate;
        long leaseIndexes = leaseIndexes(ds, schema);
        this.leasesIndexed = leaseIndexes > 0;
        this.layout = (leaseIndexes == 0 ? "no index over leases" : leaseIndexes + " indexes over leases")
                + ", fillfactor " + fillfactor(ds, schema);
    }

    /** The pool on the migrated schema as it is; the label says whether an index names a lease column. */
    static HorizonPool asMigrated(DataSource ds, String schema, int accounts, int rate, int phases) throws Exception {
        return new HorizonPool(ds, schema, accounts, rate, phases);
    }

    /** {@return whether an index of the table names a lease column (as the migrated schema has it)} */
    boolean leasesIndexed() {
        return leasesIndexed;
    }

    /**
     * The pool on a copy of {@code schema}'s table in {@code copySchema} (made afresh), with the
     * partial indexes over lease state of change sets {@code pool-002} and {@code pool-003} and pages filled to 100%.
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
        return new HorizonPool(ds, copySchema, accounts, rate, phases);
    }

    /** {@return how many indexes of the table name {@code locked_until}, as the catalog has them} */
    private static long leaseIndexes(DataSource ds, String schema) throws Exception {
        return Jdbc.autoCommit(
                ds,
                c -> Jdbc.queryLong(
                        c,
                        "SELECT count(*) FROM pg_indexes WHERE schemaname = ? AND tablename = ? AND indexdef LIKE ?",
                        schema,
                        TABLE,
                        "%locked_until%"));
    }

    /** {@return the table's fillfactor, as the catalog has it} */
    private static long fillfactor(DataSource ds, String schema) throws Exception {
        return Jdbc.autoCommit(
                ds,
                c -> Jdbc.queryLong(
                        c,
                        "SELECT coalesce((SELECT substr(o, 12)::int FROM unnest(reloptions) o WHERE o LIKE 'fillfactor=%'), 100)"
                                + " FROM pg_class WHERE oid = to_regclass(?)",
                        schema + "." + TABLE));
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

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
 * own, through the public API, at a fixed rate; the timed statement is {@code acquire}. The
 * accounts' rows are only locked; the leases are rows of {@code channel_account_leases}, whose
 * slots the acquisitions turn (changelog {@code pool-008}); the dead tuples and sizes reported are
 * those of the accounts and of the four slots.
 */
final class HorizonPool extends HorizonLoad {

    static final String TABLE = "channel_accounts";
    static final String LEASES = "channel_account_leases";
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
    private final AtomicLong owners = new AtomicLong();
    final AtomicLong empty = new AtomicLong();
    private final List<Thread> threads = new ArrayList<>();

    HorizonPool(DataSource ds, String schema, int accounts, int rate, int phases) {
        super(phases);
        this.ds = ds;
        this.schema = schema;
        this.accounts = accounts;
        this.rate = rate;
    }

    @Override
    String label() {
        return "pool, " + accounts + " accounts: rows locked, leases in " + LEASES + "'s turning slots";
    }

    @Override
    String timed() {
        return "ChannelAccountPool.acquire";
    }

    @Override
    List<String> tables() {
        List<String> tables = new ArrayList<>(List.of(schema + "." + TABLE));
        for (int slot = 0; slot < 4; slot++) {
            tables.add(schema + "." + LEASES + "_slot" + slot);
        }
        return tables;
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

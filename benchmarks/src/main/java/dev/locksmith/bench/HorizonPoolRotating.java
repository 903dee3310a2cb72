package dev.locksmith.bench;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * A pool whose leases leave no row version the horizon can hold, run beside the library's pool
 * to price issue 32's item 4 before the library adopts it. The accounts' rows are never updated,
 * only locked; a lease is a row inserted into the current table of a {@link Rotation} and deleted
 * by its release, so dead tuples stay bounded by the leases of about one generation.
 *
 * <p>Exclusivity without an update: an acquisition locks an account's row ({@code FOR UPDATE SKIP
 * LOCKED}, a lock, no new version) in one statement, and inserts the lease in a second statement
 * only if no live lease of the account is there. In READ COMMITTED the second statement's snapshot
 * is taken after the lock was granted, so it sees the lease of every acquirer that held the lock
 * before; the first statement's own look may be older than the lock and only chooses the
 * candidate. (One statement would not do: with a lock alone there is no newer row version for
 * the lock to re-check, and a second acquirer whose snapshot predates the first's commit would
 * insert a second lease.)
 */
final class HorizonPoolRotating extends HorizonLoad {

    /** Random accounts an acquisition looks at, as the library's default strategy. */
    private static final int PROBES = 8;

    private final DataSource ds;
    private final int accounts;
    private final int rate;
    private final List<String> tables = new ArrayList<>();
    private final List<String> leaseTables = new ArrayList<>();
    private final Rotation rotation;
    private final String pick;
    private final List<String> leases = new ArrayList<>();
    private final List<String> releases = new ArrayList<>();
    private final AtomicLong owners = new AtomicLong();
    /** Acquisitions whose second statement found a lease the first did not see (tried again). */
    final AtomicLong lost = new AtomicLong();

    private final List<Thread> threads = new ArrayList<>();

    HorizonPoolRotating(DataSource ds, String schema, int accounts, int rate, long generationMillis, int phases)
            throws Exception {
        super(phases);
        this.ds = ds;
        this.accounts = accounts;
        this.rate = rate;
        var sql = DSL.using(SQLDialect.POSTGRES);
        String accountTable = sql.render(DSL.name(schema, "horizon_pool_accounts"));
        String sequence = sql.render(DSL.name(schema, "horizon_pool_fence"));
        tables.add(schema + ".horizon_pool_accounts");
        List<String> ddl = new ArrayList<>();
        ddl.add("DROP TABLE IF EXISTS " + accountTable);
        ddl.add("CREATE TABLE " + accountTable + " (id int PRIMARY KEY, public_key text NOT NULL)");
        ddl.add("DROP SEQUENCE IF EXISTS " + sequence);
        ddl.add("CREATE SEQUENCE " + sequence);
        for (int i = 0; i < Rotation.TABLES; i++) {
            String name = "horizon_pool_leases_" + i;
            String quoted = sql.render(DSL.name(schema, name));
            tables.add(schema + "." + name);
            leaseTables.add(quoted);
            ddl.add("DROP TABLE IF EXISTS " + quoted);
            ddl.add("CREATE TABLE " + quoted + " (account int NOT NULL, owner text NOT NULL,"
                    + " locked_until timestamptz NOT NULL, fence bigint NOT NULL DEFAULT nextval("
                    + sql.render(DSL.inline(sequence)) + "::regclass))");
            ddl.add("CREATE INDEX ON " + quoted + " (account)");
        }
        Jdbc.autoCommit(ds, c -> {
            for (String statement : ddl) {
                Jdbc.update(c, statement);
            }
            Jdbc.update(
                    c,
                    "INSERT INTO " + accountTable
                            + " SELECT i, 'G' || lpad(i::text, 55, '0') FROM generate_series(0, ? - 1) i",
                    accounts);
            Jdbc.update(c, "VACUUM ANALYZE " + accountTable);
            return null;
        });
        this.rotation = new Rotation(ds, leaseTables, generationMillis);
        this.pick = "SELECT a.id FROM " + accountTable + " a WHERE a.id = ANY(?) AND " + unleased("a.id")
                + " LIMIT 1 FOR UPDATE OF a SKIP LOCKED";
        for (String table : leaseTables) {
            leases.add("INSERT INTO " + table + " (account, owner, locked_until)"
                    + " SELECT ?, ?, clock_timestamp() + interval '30 seconds' WHERE " + unleased("?")
                    + " RETURNING fence");
            releases.add("DELETE FROM " + table + " WHERE account = ? AND owner = ?");
        }
    }

    /** No unexpired lease of {@code account} in any table of the rotation. */
    private String unleased(String account) {
        List<String> each = new ArrayList<>();
        for (String table : leaseTables) {
            each.add("NOT EXISTS (SELECT 1 FROM " + table + " l WHERE l.account = " + account
                    + " AND l.locked_until > clock_timestamp())");
        }
        return String.join(" AND ", each);
    }

    @Override
    String label() {
        return "pool prototype, " + accounts + " accounts: rows locked, leases inserted into " + Rotation.TABLES
                + " rotating tables x " + rotation.generationMillis() + " ms";
    }

    @Override
    String timed() {
        return "lock an account, insert its lease, commit";
    }

    @Override
    List<String> tables() {
        return tables;
    }

    @Override
    boolean hasBacklog() {
        return false;
    }

    @Override
    void start() {
        for (int i = 0; i < HorizonPool.THREADS; i++) {
            threads.add(paced("horizon-pool-rotating-" + i, Math.max(1, rate / HorizonPool.THREADS), this::cycle));
        }
        Thread rotator = new Thread(() -> rotation.run(stop, failures), "horizon-pool-rotator");
        rotator.setDaemon(true);
        rotator.start();
        threads.add(rotator);
    }

    private void cycle() throws SQLException {
        String owner = "horizon-" + owners.incrementAndGet();
        long begin = System.nanoTime();
        int[] lease = acquire(owner);
        times().time(System.nanoTime() - begin);
        if (lease == null) {
            return;
        }
        Jdbc.autoCommit(ds, c -> Jdbc.update(c, releases.get(lease[1]), lease[0], owner));
        done.incrementAndGet();
    }

    /** {@return the account leased and the table its lease is in, or null when every probe was leased} */
    private int[] acquire(String owner) throws SQLException {
        for (int attempt = 0; attempt < 3; attempt++) {
            int table = Rotation.table(rotation.generation());
            int[] leased = Jdbc.inTransaction(ds, c -> {
                Integer account = lockOne(c);
                if (account == null) {
                    return new int[0];
                }
                try (PreparedStatement s = c.prepareStatement(leases.get(table))) {
                    s.setInt(1, account);
                    s.setString(2, owner);
                    for (int i = 0; i < Rotation.TABLES; i++) {
                        s.setInt(3 + i, account);
                    }
                    try (ResultSet r = s.executeQuery()) {
                        return r.next() ? new int[] {account, table} : null;
                    }
                }
            });
            if (leased == null) {
                lost.incrementAndGet();
                continue;
            }
            return leased.length == 0 ? null : leased;
        }
        return null;
    }

    private Integer lockOne(Connection c) throws SQLException {
        Integer[] probes = new Integer[PROBES];
        for (int i = 0; i < PROBES; i++) {
            probes[i] = ThreadLocalRandom.current().nextInt(accounts);
        }
        try (PreparedStatement s = c.prepareStatement(pick)) {
            Array array = c.createArrayOf("int4", probes);
            s.setArray(1, array);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? r.getInt(1) : null;
            }
        }
    }

    @Override
    public void close() throws Exception {
        join(threads);
        System.err.println("horizon: pool prototype: " + rotation.summary() + ", " + lost.get()
                + " acquisitions found the account leased by the second statement");
    }
}

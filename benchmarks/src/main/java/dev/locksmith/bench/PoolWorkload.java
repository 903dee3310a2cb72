package dev.locksmith.bench;

import dev.locksmith.pool.AcquireStrategy;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.pool.ChannelAccountPoolConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/**
 * pool: acquire + release cycles per second and acquire latency, at pool sizes 100, 10,000 and
 * 1,000,000 with 0%, 90% and 99% of the accounts under a long lease, for every strategy
 * ({@code order_by_random} idle only: its cost is the point of comparison). And the spread:
 * 20,000 acquisitions (2,000 with {@code quick}) on a pool of 1,000 with half of it leased at
 * random ({@code leased=50%}) or after removing 100 contiguous accounts ({@code gap=100}),
 * reported as {@code max/min} (selection frequency of the most- over the least-picked idle
 * account) and {@code chi2} with {@code chi2crit}, the chi-square value at p = 0.001 for the
 * number of idle accounts (uniform at that level when {@code chi2 < chi2crit}). An ownership
 * ledger checked on every acquire counts double holds as violations.
 */
final class PoolWorkload implements Workload {

    /** No live lease of {@code %s}: not released, not expired. */
    static final String UNLEASED = "NOT EXISTS (SELECT 1 FROM channel_account_leases l WHERE l.public_key = %s "
            + "AND l.released_at IS NULL AND l.locked_until > now())";

    static final String SLOT_OF = "(SELECT min(slot) FROM channel_accounts) + floor(%s * ((SELECT max(slot) "
            + "FROM channel_accounts) - (SELECT min(slot) FROM channel_accounts) + 1))::bigint";
    static final String START = String.format(SLOT_OF, "?::float8");
    // The library binds its random start once and uses it in both branches; plain JDBC has
    // positional parameters only, so the raw statement takes it twice.
    static final String SCAN = "SELECT b1.public_key FROM (SELECT public_key FROM channel_accounts ca "
            + "WHERE slot >= " + START + " AND " + String.format(UNLEASED, "ca.public_key")
            + " ORDER BY slot LIMIT 1 FOR UPDATE OF ca SKIP LOCKED) b1 "
            + "UNION ALL SELECT b2.public_key FROM (SELECT public_key FROM channel_accounts ca "
            + "WHERE slot < " + START + " AND " + String.format(UNLEASED, "ca.public_key")
            + " ORDER BY slot LIMIT 1 FOR UPDATE OF ca SKIP LOCKED) b2";
    // The pick: statement 1 of an acquisition, an account without a live lease, locked
    static final String RAW_RANDOM_START = "SELECT c.public_key FROM (" + SCAN + ") c LIMIT 1";
    static final String RAW_RANDOM_PROBES = "SELECT c.public_key FROM ("
            + "SELECT b0.public_key FROM (SELECT ca.public_key FROM unnest(?::float8[]) WITH ORDINALITY AS p(u, ord) "
            + "JOIN channel_accounts ca ON ca.slot = " + String.format(SLOT_OF, "p.u")
            + " LEFT JOIN LATERAL (SELECT l.released_at, l.locked_until FROM channel_account_leases l"
            + " WHERE l.public_key = ca.public_key ORDER BY l.fence DESC LIMIT 1) latest ON true"
            + " WHERE latest.locked_until IS NULL OR latest.released_at IS NOT NULL OR latest.locked_until <= now()"
            + " ORDER BY latest.locked_until NULLS FIRST, p.ord LIMIT 1 FOR UPDATE OF ca SKIP LOCKED) b0 UNION ALL "
            + SCAN + ") c LIMIT 1";
    static final String RAW_ORDER_BY_RANDOM = "SELECT public_key FROM channel_accounts ca WHERE "
            + String.format(UNLEASED, "ca.public_key") + " ORDER BY random() LIMIT 1 FOR UPDATE OF ca SKIP LOCKED";
    // The acquisition is one statement: the pick (%s), then the lease unless the schema's
    // function, whose query takes a snapshot after the pick's lock, finds a live one
    static final String RAW_ACQUIRE = "WITH picked AS (%s), inserted AS ("
            + "INSERT INTO channel_account_leases (public_key, locked_by, locked_at, locked_until) "
            + "SELECT public_key, ?, now(), now() + ?::interval FROM picked WHERE NOT channel_account_leased(public_key)"
            + " RETURNING public_key) SELECT picked.public_key AS picked, inserted.public_key"
            + " FROM picked LEFT JOIN inserted ON true";
    // the account's latest lease by fence, as the library's release finds it
    static final String RAW_RELEASE = "UPDATE channel_account_leases SET locked_until = clock_timestamp(), "
            + "released_at = clock_timestamp() WHERE public_key = ? AND locked_by = ? AND released_at IS NULL "
            + "AND locked_until > clock_timestamp() AND fence = "
            + "(SELECT max(f.fence) FROM channel_account_leases f WHERE f.public_key = ?)";
    static final String HOLDER = "bench-hold";
    static final int PROBES = 8;

    private final DataSource ds;
    private final DSLContext dsl;
    private String state = "";

    PoolWorkload(DataSource ds, DSLContext dsl) {
        this.ds = ds;
        this.dsl = dsl;
    }

    @Override
    public String name() {
        return "pool";
    }

    /** The pool a run starts from: {@code size} accounts, {@code leasedPercent} under a long lease, {@code gap} removed. */
    record Shape(int size, int leasedPercent, int gap) {
        String config() {
            return "size=" + size + (gap > 0 ? " gap=" + gap : " leased=" + leasedPercent + "%");
        }
    }

    @Override
    public List<Case> cases(BenchOptions o) {
        List<Case> cases = new ArrayList<>();
        List<Integer> sizes = o.quick() ? List.of(100, 10_000) : List.of(100, 10_000, 1_000_000);
        List<Integer> leased = o.quick() ? List.of(0) : List.of(0, 90, 99);
        for (int size : sizes) {
            for (int percent : leased) {
                for (AcquireStrategy strategy : AcquireStrategy.values()) {
                    if (strategy == AcquireStrategy.ORDER_BY_RANDOM && percent > 0) {
                        continue;
                    }
                    Shape shape = new Shape(size, percent, 0);
                    for (int workers : o.workersOr(List.of(4))) {
                        cases.add(Workload.inEveryMode(
                                name(strategy) + " " + shape.config(),
                                workers,
                                "cycles/s",
                                dsl,
                                library -> new Variant(shape, strategy, library, 0),
                                new Variant(shape, strategy, null, 0)));
                    }
                }
            }
        }
        int acquisitions = o.quick() ? 2_000 : 20_000;
        List<Shape> spreads = o.quick()
                ? List.of(new Shape(1_000, 50, 0))
                : List.of(new Shape(1_000, 50, 0), new Shape(1_000, 0, 100));
        for (Shape shape : spreads) {
            for (AcquireStrategy strategy :
                    o.quick() ? List.of(AcquireStrategy.RANDOM_PROBES) : List.of(AcquireStrategy.values())) {
                for (int workers : o.workersOr(List.of(4))) {
                    cases.add(new Case(
                            name(strategy) + " spread " + shape.config(),
                            workers,
                            "cycles/s",
                            new Variant(shape, strategy, dsl, acquisitions),
                            null));
                }
            }
        }
        return cases;
    }

    private static String name(AcquireStrategy strategy) {
        return strategy.name().toLowerCase();
    }

    /** Puts the table into {@code shape}, unless it is there already; then clears the run's leftovers. */
    private void prepare(Shape shape) throws Exception {
        String wanted = shape.toString();
        Jdbc.autoCommit(ds, c -> {
            if (!state.equals(wanted)) {
                Jdbc.update(c, "TRUNCATE channel_accounts RESTART IDENTITY");
                Jdbc.update(c, "TRUNCATE channel_account_leases");
                // each key in its bucket, as register puts it (0 on one server; on Citus the
                // change set's md5 expression over the table's shards)
                Jdbc.update(
                        c,
                        "INSERT INTO channel_accounts (public_key, bucket) "
                                + "SELECT k, mod(('x' || substr(md5(k), 1, 7))::bit(28)::int, ?) "
                                + "FROM (SELECT 'G' || lpad(n::text, 8, '0') AS k FROM generate_series(1, ?) n) keys",
                        (int) Jdbc.shards(c, "channel_accounts"),
                        shape.size());
                if (shape.gap() > 0) {
                    Jdbc.update(
                            c,
                            "DELETE FROM channel_accounts WHERE slot > ? AND slot <= ?",
                            (long) (shape.size() - shape.gap()) / 2,
                            (long) (shape.size() + shape.gap()) / 2);
                }
                // The same pseudo-random sample every time (ordered by a hash of the slot), under a
                // lease no run outlives.
                Jdbc.update(
                        c,
                        "INSERT INTO channel_account_leases (public_key, bucket, locked_by, locked_at, locked_until) "
                                + "SELECT public_key, bucket, ?, now(), now() + interval '1 day' FROM channel_accounts "
                                + "WHERE slot IN (SELECT slot FROM channel_accounts ORDER BY md5(slot::text) LIMIT ?)",
                        HOLDER,
                        (long) shape.size() * shape.leasedPercent() / 100);
                state = wanted;
            } else {
                // Every run starts from the same state: the long leases only, dead tuples vacuumed.
                Jdbc.update(c, "DELETE FROM channel_account_leases WHERE locked_by <> ?", HOLDER);
            }
            Jdbc.update(c, "VACUUM ANALYZE channel_accounts, channel_account_leases");
            return null;
        });
    }

    private final class Variant implements Workload.Variant {
        final Shape shape;
        final AcquireStrategy strategy;
        /** The library's DSLContext (its execution mode), or null for the raw JDBC baseline. */
        final DSLContext library;

        final int acquisitions;
        final Map<String, String> ledger = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> picks = new ConcurrentHashMap<>();
        final AtomicInteger budget = new AtomicInteger();
        final AtomicLong violations = new AtomicLong();

        /** {@code acquisitions} > 0: a spread case, which runs exactly that many. */
        Variant(Shape shape, AcquireStrategy strategy, DSLContext library, int acquisitions) {
            this.shape = shape;
            this.strategy = strategy;
            this.library = library;
            this.acquisitions = acquisitions;
        }

        @Override
        public void prepare() throws Exception {
            ledger.clear();
            picks.clear();
            budget.set(acquisitions);
            violations.set(0);
            PoolWorkload.this.prepare(shape);
        }

        @Override
        public boolean timed() {
            return true;
        }

        @Override
        public boolean untilExhausted() {
            return acquisitions > 0;
        }

        @Override
        public Op op(int worker) {
            ChannelAccountPool pool = library == null
                    ? null
                    : new ChannelAccountPool(
                            library,
                            ChannelAccountPoolConfig.builder()
                                    .strategy(strategy)
                                    .build());
            Duration lease = Duration.ofMinutes(1);
            return () -> {
                if (acquisitions > 0 && budget.getAndDecrement() <= 0) {
                    return 0;
                }
                String owner = "w" + worker + "-" + ThreadLocalRandom.current().nextLong();
                String key = library != null
                        ? pool.acquire(lease, owner)
                                .map(ChannelAccount::publicKey)
                                .orElse(null)
                        : rawAcquire(owner);
                if (key == null) {
                    if (acquisitions > 0) {
                        budget.incrementAndGet(); // nothing acquired: the attempt does not count
                    }
                    return 0;
                }
                if (ledger.putIfAbsent(key, owner) != null) {
                    violations.incrementAndGet();
                }
                if (acquisitions > 0) {
                    picks.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
                }
                ledger.remove(key, owner);
                if (library != null) {
                    library.transaction(c -> pool.release(c.dsl(), key, owner));
                } else if (Jdbc.inTransaction(ds, c -> Jdbc.update(c, RAW_RELEASE, key, owner, key)) != 1) {
                    violations.incrementAndGet();
                }
                return 1;
            };
        }

        /**
         * The library's one statement in plain JDBC, auto-committed; picks again (up to 8 times)
         * when the account picked was found leased.
         */
        private String rawAcquire(String owner) throws Exception {
            String pick = switch (strategy) {
                case RANDOM_PROBES -> RAW_RANDOM_PROBES;
                case RANDOM_START -> RAW_RANDOM_START;
                case ORDER_BY_RANDOM -> RAW_ORDER_BY_RANDOM;
            };
            String sql = RAW_ACQUIRE.formatted(pick);
            try (Connection c = ds.getConnection()) {
                for (int attempt = 0; attempt < 8; attempt++) {
                    try (PreparedStatement s = c.prepareStatement(sql)) {
                        int i = 1;
                        ThreadLocalRandom random = ThreadLocalRandom.current();
                        if (strategy == AcquireStrategy.RANDOM_PROBES) {
                            Double[] probes = new Double[PROBES];
                            for (int p = 0; p < PROBES; p++) {
                                probes[p] = random.nextDouble();
                            }
                            s.setObject(i++, probes); // in binary, as the library binds it
                        }
                        if (strategy != AcquireStrategy.ORDER_BY_RANDOM) {
                            double r = random.nextDouble();
                            s.setDouble(i++, r);
                            s.setDouble(i++, r);
                        }
                        s.setString(i++, owner);
                        s.setString(i, "60 seconds");
                        try (ResultSet rs = s.executeQuery()) {
                            if (!rs.next()) {
                                return null;
                            }
                            String leased = rs.getString(2);
                            if (leased != null) {
                                return leased;
                            }
                        }
                    }
                }
                return null;
            }
        }

        @Override
        public long verify() {
            return violations.get();
        }

        @Override
        public Map<String, Double> extras() {
            if (acquisitions == 0) {
                return Map.of();
            }
            List<Integer> idle = new ArrayList<>();
            try {
                Jdbc.autoCommit(ds, c -> {
                    try (PreparedStatement s = c.prepareStatement(
                            "SELECT public_key FROM channel_accounts a WHERE NOT EXISTS (SELECT 1 FROM "
                                    + "channel_account_leases l WHERE l.public_key = a.public_key AND l.locked_by = ?)")) {
                        s.setString(1, HOLDER);
                        try (ResultSet rs = s.executeQuery()) {
                            while (rs.next()) {
                                AtomicInteger n = picks.get(rs.getString(1));
                                idle.add(n == null ? 0 : n.get());
                            }
                        }
                    }
                    return null;
                });
            } catch (Exception e) {
                throw new IllegalStateException("could not read the idle accounts", e);
            }
            return Spread.of(idle).figures();
        }
    }
}

package dev.locksmith.bench;

import dev.locksmith.pool.AcquireStrategy;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/**
 * pool: acquire + release cycles per second and acquire latency, at pool sizes 100, 10,000 and
 * 1,000,000, for both strategies. An ownership ledger checked on every acquire counts double
 * holds as violations.
 */
final class PoolWorkload implements Workload {

    static final String SET_LEASE = "UPDATE channel_accounts SET locked_by = ?, locked_at = now(), "
            + "locked_until = now() + ?::interval, updated_at = now() WHERE public_key = (";
    static final String RETURNING = ") RETURNING public_key, locked_by, locked_at, locked_until";
    static final String START = "(SELECT min(slot) FROM channel_accounts) + floor(?::float8 * ((SELECT max(slot) "
            + "FROM channel_accounts) - (SELECT min(slot) FROM channel_accounts) + 1))::bigint";
    // The library binds its random start once and uses it in both branches; plain JDBC has
    // positional parameters only, so the raw statement takes it twice.
    static final String RAW_RANDOM_START = SET_LEASE + "SELECT c.public_key FROM ("
            + "SELECT b1.public_key FROM (SELECT public_key FROM channel_accounts WHERE locked_until IS NULL AND slot >= "
            + START + " ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED) b1 UNION ALL "
            + "SELECT b2.public_key FROM (SELECT public_key FROM channel_accounts WHERE locked_until IS NULL AND slot < "
            + START + " ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED) b2 UNION ALL "
            + "SELECT b3.public_key FROM (SELECT public_key FROM channel_accounts WHERE locked_until < now() "
            + "ORDER BY locked_until LIMIT 1 FOR UPDATE SKIP LOCKED) b3) c LIMIT 1" + RETURNING;
    static final String RAW_ORDER_BY_RANDOM = SET_LEASE + "SELECT public_key FROM channel_accounts WHERE "
            + "locked_until IS NULL OR locked_until < now() ORDER BY random() LIMIT 1 FOR UPDATE SKIP LOCKED" + RETURNING;
    static final String RAW_RELEASE = "UPDATE channel_accounts SET locked_by = NULL, locked_at = NULL, "
            + "locked_until = NULL, updated_at = now() WHERE public_key = ? AND locked_by = ? AND locked_until > clock_timestamp()";

    private final DataSource ds;
    private final DSLContext dsl;
    private long registered = -1;

    PoolWorkload(DataSource ds, DSLContext dsl) {
        this.ds = ds;
        this.dsl = dsl;
    }

    @Override
    public String name() {
        return "pool";
    }

    @Override
    public List<Case> cases(BenchOptions o) {
        List<Case> cases = new ArrayList<>();
        List<Integer> sizes = o.quick() ? List.of(100, 10_000) : List.of(100, 10_000, 1_000_000);
        for (int size : sizes) {
            for (AcquireStrategy strategy : AcquireStrategy.values()) {
                for (int workers : o.workersOr(List.of(4))) {
                    cases.add(new Case(strategy.name().toLowerCase() + " size=" + size, workers, "cycles/s",
                            new Variant(size, strategy, true), new Variant(size, strategy, false)));
                }
            }
        }
        return cases;
    }

    private final class Variant implements Workload.Variant {
        final int size;
        final AcquireStrategy strategy;
        final boolean library;
        final Map<String, String> ledger = new ConcurrentHashMap<>();
        final AtomicLong violations = new AtomicLong();

        Variant(int size, AcquireStrategy strategy, boolean library) {
            this.size = size;
            this.strategy = strategy;
            this.library = library;
        }

        @Override
        public void prepare() throws Exception {
            ledger.clear();
            violations.set(0);
            if (registered != size) {
                Jdbc.autoCommit(ds, c -> {
                    Jdbc.update(c, "TRUNCATE channel_accounts RESTART IDENTITY");
                    Jdbc.update(c, "INSERT INTO channel_accounts (public_key) "
                            + "SELECT 'G' || lpad(n::text, 8, '0') FROM generate_series(1, ?) n", size);
                    Jdbc.update(c, "VACUUM ANALYZE channel_accounts");
                    return null;
                });
                registered = size;
            } else {
                // Every run starts from the same state: all idle, dead tuples vacuumed, fresh statistics.
                Jdbc.autoCommit(ds, c -> {
                    Jdbc.update(c, "UPDATE channel_accounts SET locked_by = NULL, locked_at = NULL, "
                            + "locked_until = NULL WHERE locked_until IS NOT NULL");
                    Jdbc.update(c, "VACUUM ANALYZE channel_accounts");
                    return null;
                });
            }
        }

        @Override
        public boolean timed() {
            return true;
        }

        @Override
        public Op op(int worker) {
            ChannelAccountPool pool = new ChannelAccountPool(dsl, strategy);
            Duration lease = Duration.ofMinutes(1);
            return () -> {
                String owner = "w" + worker + "-" + ThreadLocalRandom.current().nextLong();
                String key;
                if (library) {
                    key = pool.acquire(lease, owner).map(ChannelAccount::publicKey).orElse(null);
                } else {
                    key = Jdbc.autoCommit(ds, c -> {
                        try (PreparedStatement s = c.prepareStatement(
                                strategy == AcquireStrategy.RANDOM_START ? RAW_RANDOM_START : RAW_ORDER_BY_RANDOM)) {
                            s.setString(1, owner);
                            s.setString(2, "60 seconds");
                            if (strategy == AcquireStrategy.RANDOM_START) {
                                double r = ThreadLocalRandom.current().nextDouble();
                                s.setDouble(3, r);
                                s.setDouble(4, r);
                            }
                            try (ResultSet rs = s.executeQuery()) {
                                return rs.next() ? rs.getString(1) : null;
                            }
                        }
                    });
                }
                if (key == null) {
                    return 0;
                }
                if (ledger.putIfAbsent(key, owner) != null) {
                    violations.incrementAndGet();
                }
                ledger.remove(key, owner);
                if (library) {
                    dsl.transaction(c -> pool.release(c.dsl(), key, owner));
                } else if (Jdbc.inTransaction(ds, c -> Jdbc.update(c, RAW_RELEASE, key, owner)) != 1) {
                    violations.incrementAndGet();
                }
                return 1;
            };
        }

        @Override
        public long verify() {
            return violations.get();
        }
    }
}

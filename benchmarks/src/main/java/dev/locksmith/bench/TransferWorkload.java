package dev.locksmith.bench;

import dev.locksmith.RetryPolicy;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.OptimisticConflictException;
import dev.locksmith.accounts.TransferStrategy;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/**
 * transfer: random transfers per second for each strategy at high contention (10 accounts) and
 * low contention (100,000), with retries and give-ups per transfer as extras. The raw baselines
 * run the same statements as ATOMIC_GUARD and PESSIMISTIC in plain JDBC. After every run the
 * total balance must be unchanged and no balance negative, else it counts as a violation.
 */
final class TransferWorkload implements Workload {

    static final BigDecimal OPENING = new BigDecimal("1000.00");
    static final RetryPolicy POLICY = RetryPolicy.builder()
            .maxAttempts(100)
            .initialBackoff(Duration.ofMillis(1))
            .maxBackoff(Duration.ofMillis(20))
            .build();

    private final DataSource ds;
    private final DSLContext dsl;
    private int opened = -1;

    TransferWorkload(DataSource ds, DSLContext dsl) {
        this.ds = ds;
        this.dsl = dsl;
    }

    @Override
    public String name() {
        return "transfer";
    }

    @Override
    public List<Case> cases(BenchOptions o) {
        List<Case> cases = new ArrayList<>();
        for (int accounts : o.quick() ? List.of(10) : List.of(10, 100_000)) {
            for (TransferStrategy strategy : TransferStrategy.values()) {
                for (int workers : o.workersOr(o.quick() ? List.of(4) : List.of(1, 4, 16))) {
                    boolean hasRaw =
                            strategy == TransferStrategy.ATOMIC_GUARD || strategy == TransferStrategy.PESSIMISTIC;
                    cases.add(Workload.inEveryMode(
                            strategy.name().toLowerCase() + " accounts=" + accounts,
                            workers,
                            "transfers/s",
                            dsl,
                            library -> new Variant(accounts, strategy, library, true),
                            hasRaw ? new Variant(accounts, strategy, null, false) : null));
                    if (hasRaw && !o.quick()) {
                        // without the commit-outcome look-up, to price its extra round trip
                        cases.add(new Case(
                                strategy.name().toLowerCase() + " accounts=" + accounts + " resolution=off",
                                workers,
                                "transfers/s",
                                new Variant(accounts, strategy, dsl, false),
                                new Variant(accounts, strategy, null, false)));
                    }
                }
            }
        }
        return cases;
    }

    private final class Variant implements Workload.Variant {
        final int accounts;
        final TransferStrategy strategy;
        /** The library's DSLContext (its execution mode), or null for the raw JDBC baseline. */
        final DSLContext library;

        final boolean resolveCommits;
        final AtomicLong operations = new AtomicLong();
        final AtomicLong retries = new AtomicLong();
        final AtomicLong gaveUp = new AtomicLong();

        Variant(int accounts, TransferStrategy strategy, DSLContext library, boolean resolveCommits) {
            this.accounts = accounts;
            this.strategy = strategy;
            this.library = library;
            this.resolveCommits = resolveCommits;
        }

        @Override
        public void prepare() throws Exception {
            operations.set(0);
            retries.set(0);
            gaveUp.set(0);
            if (opened != accounts) {
                Jdbc.autoCommit(ds, c -> {
                    Jdbc.update(c, "TRUNCATE accounts RESTART IDENTITY");
                    Jdbc.update(
                            c, "INSERT INTO accounts (balance) SELECT ? FROM generate_series(1, ?)", OPENING, accounts);
                    Jdbc.update(c, "VACUUM ANALYZE accounts");
                    return null;
                });
                opened = accounts;
            } else {
                // Same starting state for every run: the previous run's dead tuples vacuumed.
                Jdbc.autoCommit(ds, c -> Jdbc.update(c, "VACUUM ANALYZE accounts"));
            }
        }

        @Override
        public Op op(int worker) {
            Accounts repo = library == null
                    ? null
                    : new Accounts(
                            library,
                            POLICY.toBuilder()
                                    .listener((n, failure, pause) -> retries.incrementAndGet())
                                    .commitResolution(
                                            resolveCommits ? RetryPolicy.DEFAULT_COMMIT_RESOLUTION : Duration.ZERO)
                                    .build());
            return () -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                long from = 1 + random.nextInt(accounts);
                long to = 1 + random.nextInt(accounts - 1);
                if (to >= from) {
                    to++;
                }
                BigDecimal amount = BigDecimal.valueOf(random.nextInt(1, 5001), 2);
                operations.incrementAndGet();
                if (library == null) {
                    long a = from;
                    long b = to;
                    Jdbc.inTransaction(
                            ds,
                            c -> strategy == TransferStrategy.ATOMIC_GUARD
                                    ? rawAtomicGuard(c, a, b, amount)
                                    : rawPessimistic(c, a, b, amount));
                    return 1;
                }
                try {
                    repo.transfer(from, to, amount, strategy);
                } catch (OptimisticConflictException e) {
                    gaveUp.incrementAndGet();
                }
                return 1;
            };
        }

        @Override
        public long verify() throws Exception {
            return Jdbc.autoCommit(ds, c -> {
                long wrongTotal = Jdbc.queryLong(
                        c,
                        "SELECT CASE WHEN sum(balance) = ? * count(*) THEN 0 ELSE 1 END " + "FROM accounts",
                        OPENING);
                long negative = Jdbc.queryLong(c, "SELECT count(*) FROM accounts WHERE balance < 0");
                return wrongTotal + negative;
            });
        }

        @Override
        public Map<String, Double> extras() {
            double ops = Math.max(1, operations.get());
            return library != null
                    ? Map.of("retries_per_op", retries.get() / ops, "gave_up_per_op", gaveUp.get() / ops)
                    : Map.of();
        }
    }

    private static int rawAtomicGuard(Connection c, long from, long to, BigDecimal amount) throws SQLException {
        if (to < from) {
            Jdbc.queryLong(c, "SELECT id FROM accounts WHERE id = ? FOR NO KEY UPDATE", to);
        }
        if (Jdbc.update(
                        c,
                        "UPDATE accounts SET balance = balance - ?, version = version + 1, updated_at = now() "
                                + "WHERE id = ? AND balance >= ?",
                        amount,
                        from,
                        amount)
                == 0) {
            return 0;
        }
        return Jdbc.update(
                c,
                "UPDATE accounts SET balance = balance + ?, version = version + 1, updated_at = now() "
                        + "WHERE id = ?",
                amount,
                to);
    }

    private static int rawPessimistic(Connection c, long from, long to, BigDecimal amount) throws SQLException {
        BigDecimal source = null;
        BigDecimal target = null;
        try (PreparedStatement s =
                c.prepareStatement("SELECT id, balance, version, created_at, updated_at FROM accounts "
                        + "WHERE id IN (?, ?) ORDER BY id FOR NO KEY UPDATE")) {
            s.setLong(1, from);
            s.setLong(2, to);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    if (rs.getLong(1) == from) {
                        source = rs.getBigDecimal(2);
                    } else {
                        target = rs.getBigDecimal(2);
                    }
                }
            }
        }
        if (source == null || target == null || source.compareTo(amount) < 0) {
            return 0;
        }
        long first = Math.min(from, to);
        for (long id : new long[] {first, first == from ? to : from}) {
            BigDecimal balance = id == from ? source.subtract(amount) : target.add(amount);
            Jdbc.update(
                    c,
                    "UPDATE accounts SET balance = ?, version = version + 1, updated_at = now() WHERE id = ?",
                    balance,
                    id);
        }
        return 1;
    }
}

package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;

import dev.locksmith.internal.Binds;
import dev.locksmith.internal.Distribution;
import dev.locksmith.internal.Errors;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.function.DoubleSupplier;
import org.jooq.DSLContext;

/**
 * How the pool takes an account: on one server one statement ({@link PoolStatements#acquire}) on
 * the pool's {@code DSLContext}; on Citus a transaction of its own per bucket, from a random one,
 * until a bucket has an idle account: the pick ({@link PoolStatements#pick}), the look for a live
 * lease ({@link PoolStatements#leased}) and the lease ({@link PoolStatements#lease}).
 */
final class Acquisition {

    /**
     * How many accounts one acquisition picks, at most, when the one picked turns out leased by an
     * acquirer whose commit its pick did not see (rare: see {@link PoolStatements}).
     */
    private static final int PICKS = 8;

    private final DSLContext dsl;
    private final AcquireStrategy strategy;
    private final DoubleSupplier random;
    private final Distribution distribution;
    private final Distribution.PerLayout<PoolStatements> statements;
    private final LeaseGenerations generations;

    Acquisition(
            DSLContext dsl,
            AcquireStrategy strategy,
            DoubleSupplier random,
            Distribution distribution,
            Distribution.PerLayout<PoolStatements> statements) {
        this.dsl = dsl;
        this.strategy = strategy;
        this.random = random;
        this.distribution = distribution;
        this.statements = statements;
        this.generations = new LeaseGenerations(dsl);
    }

    /** One acquisition ({@link ChannelAccountPool#acquire(Duration, String)}), then a turn of the lease generations if due. */
    Optional<ChannelAccount> once(Duration lease, String holder) {
        PoolStatements statements = this.statements.on(dsl);
        if (!statements.distributed) {
            Optional<ChannelAccount> acquired = acquireHere(statements, lease, holder);
            generations.stepIfDue(false);
            return acquired;
        }
        // On Citus: one transaction of router statements per bucket, from a random one, until a
        // bucket has an idle account; an empty pool costs one per bucket
        int buckets = distribution.shards(dsl);
        int first = (int) Math.min(buckets - 1, Math.floor(random.getAsDouble() * buckets));
        Optional<ChannelAccount> acquired = Optional.empty();
        for (int i = 0; i < buckets && acquired.isEmpty(); i++) {
            acquired = acquireIn(statements, lease, holder, (first + i) % buckets);
        }
        generations.stepIfDue(true);
        return acquired;
    }

    /**
     * One acquisition on one server: the one statement, which locks an account without a live
     * lease and inserts its lease unless a live one is there after all (its pick's snapshot can
     * predate a lease committed by an acquirer that held the account's lock before). Such an
     * account is passed over and another picked, up to {@link #PICKS} times. Auto-committed when
     * the pool's context is in auto-commit mode; otherwise (a caller's transaction, or connections
     * that do not auto-commit) inside a transaction of the context's provider, as every
     * acquisition was before it became one statement: a savepoint in a caller's transaction, which
     * an error rolls back to without aborting the caller's, and a commit of its own on a
     * connection that would otherwise roll the lease back when it is returned.
     */
    private Optional<ChannelAccount> acquireHere(PoolStatements statements, Duration lease, String holder) {
        boolean autoCommit = Errors.translating(() -> dsl.connectionResult(Connection::getAutoCommit));
        for (int pick = 1; pick <= PICKS; pick++) {
            Binds binds = choiceBinds(statements, statements.acquire.binds(), -1)
                    .set(PoolStatements.OWNER, holder)
                    .setInterval(PoolStatements.LEASE, lease);
            Optional<Try> taken = Errors.translating(() -> autoCommit
                    ? statements.acquire.fetchOptional(dsl, binds, Acquisition::tried)
                    : dsl.transactionResult(c -> statements.acquire.fetchOptional(c.dsl(), binds, Acquisition::tried)));
            if (taken.isEmpty()) {
                return Optional.empty();
            }
            if (!taken.get().lost()) {
                return taken.get().lease();
            }
        }
        return Optional.empty();
    }

    /** A row of {@link PoolStatements#acquire}: its lease, or lost when the look found one live. */
    private static Try tried(ResultSet row) throws SQLException {
        requireReadCommitted(row.getString(PoolStatements.ISOLATION));
        return row.getObject(CHANNEL_ACCOUNT_LEASES.FENCE.getName()) == null
                ? Try.LOST
                : new Try(Optional.of(PoolStatements.account(row)), false);
    }

    /**
     * Refuses an acquisition in any isolation but READ COMMITTED (a transaction it joined, or the
     * connections' default); the statement inserted nothing.
     */
    private static void requireReadCommitted(String isolation) {
        if (!PoolStatements.READ_COMMITTED.equals(isolation)) {
            throw new IllegalStateException("ChannelAccountPool.acquire needs READ COMMITTED, not " + isolation
                    + " (a transaction it joined, or the connections' default): in any other the look for a live"
                    + " lease after the account's lock reuses the transaction's snapshot and could miss a lease"
                    + " taken meanwhile");
        }
    }

    /** {@code binds} with the pick's values: the strategy's random draws, and the bucket on Citus. */
    private Binds choiceBinds(PoolStatements statements, Binds binds, int bucket) {
        if (strategy == AcquireStrategy.RANDOM_PROBES) {
            double[] probes = new double[PoolStatements.PROBE_COUNT];
            for (int i = 0; i < probes.length; i++) {
                probes[i] = random.getAsDouble();
            }
            binds.setDoubles(PoolStatements.PROBES, probes);
        }
        if (strategy != AcquireStrategy.ORDER_BY_RANDOM || statements.distributed) {
            binds.set(PoolStatements.START, random.getAsDouble());
        }
        if (bucket >= 0) {
            binds.set(PoolStatements.BUCKET, bucket);
        }
        return binds;
    }

    /**
     * One acquisition in {@code bucket} on Citus: in a transaction of its own, an account without
     * a live lease locked ({@link PoolStatements#pick}), then a look for a live lease after all
     * ({@link PoolStatements#leased}, with a snapshot taken after the lock), then the lease
     * ({@link PoolStatements#lease}). An account found leased is passed over and another picked,
     * up to {@link #PICKS} times.
     */
    private Optional<ChannelAccount> acquireIn(PoolStatements statements, Duration lease, String holder, int bucket) {
        for (int pick = 1; pick <= PICKS; pick++) {
            Try taken = Errors.translating(
                    () -> dsl.transactionResult(c -> leaseOne(c.dsl(), statements, lease, holder, bucket)));
            if (!taken.lost()) {
                return taken.lease();
            }
        }
        return Optional.empty();
    }

    /**
     * What one try came to: the lease; none, no account being free; or none, the account picked
     * being leased after all ({@code lost}).
     */
    private record Try(Optional<ChannelAccount> lease, boolean lost) {
        static final Try NONE_FREE = new Try(Optional.empty(), false);
        static final Try LOST = new Try(Optional.empty(), true);
    }

    /** One try on Citus, in {@code tx}: the pick, the look, the lease. */
    private Try leaseOne(DSLContext tx, PoolStatements statements, Duration lease, String holder, int bucket) {
        Optional<PoolStatements.Picked> picked = statements.pick.fetchOptional(
                tx, choiceBinds(statements, statements.pick.binds(), bucket), PoolStatements.Picked::of);
        if (picked.isEmpty()) {
            return Try.NONE_FREE;
        }
        requireReadCommitted(picked.get().isolation());
        Binds check = statements
                .leased
                .binds()
                .set(PoolStatements.KEY, picked.get().publicKey())
                .set(PoolStatements.BUCKET, picked.get().bucket());
        if (statements.leased.fetchOptional(tx, check, row -> true).isPresent()) {
            return Try.LOST;
        }
        Binds leaseBinds = statements
                .lease
                .binds()
                .set(PoolStatements.KEY, picked.get().publicKey())
                .set(PoolStatements.OWNER, holder)
                .setInterval(PoolStatements.LEASE, lease)
                .set(PoolStatements.BUCKET, picked.get().bucket());
        return new Try(statements.lease.fetchOptional(tx, leaseBinds, PoolStatements::account), false);
    }
}

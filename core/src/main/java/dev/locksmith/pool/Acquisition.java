package dev.locksmith.pool;

import dev.locksmith.internal.Binds;
import dev.locksmith.internal.Distribution;
import dev.locksmith.internal.Errors;
import java.time.Duration;
import java.util.Optional;
import java.util.function.DoubleSupplier;
import org.jooq.DSLContext;

/**
 * How the pool takes an account: a transaction of its own on the pool's {@code DSLContext}, the
 * pick ({@link PoolStatements#pick}) and the lease ({@link PoolStatements#lease}); on Citus one
 * such transaction per bucket, from a random one, until a bucket has an idle account.
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
            Optional<ChannelAccount> acquired = acquireIn(statements, lease, holder, -1);
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
     * One acquisition, in {@code bucket} on Citus (else -1): in a transaction of its own, an
     * account without a live lease locked ({@link PoolStatements#pick}), then its lease inserted
     * unless a live one is there after all ({@link PoolStatements#lease}: the pick's snapshot can
     * predate a lease committed by an acquirer that held the account's lock before). Such an
     * account is passed over and another picked, up to {@link #PICKS} times.
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

    /** One try, in {@code tx}: the pick, then the lease. */
    private Try leaseOne(DSLContext tx, PoolStatements statements, Duration lease, String holder, int bucket) {
        Binds pickBinds = statements.pick.binds();
        if (strategy == AcquireStrategy.RANDOM_PROBES) {
            double[] probes = new double[PoolStatements.PROBE_COUNT];
            for (int i = 0; i < probes.length; i++) {
                probes[i] = random.getAsDouble();
            }
            pickBinds.setDoubles(PoolStatements.PROBES, probes);
        }
        if (strategy != AcquireStrategy.ORDER_BY_RANDOM || statements.distributed) {
            pickBinds.set(PoolStatements.START, random.getAsDouble());
        }
        if (bucket >= 0) {
            pickBinds.set(PoolStatements.BUCKET, bucket);
        }
        Optional<PoolStatements.Picked> picked =
                statements.pick.fetchOptional(tx, pickBinds, PoolStatements.Picked::of);
        if (picked.isEmpty()) {
            return Try.NONE_FREE;
        }
        if (!"read committed".equals(picked.get().isolation())) {
            throw new IllegalStateException("ChannelAccountPool.acquire needs READ COMMITTED, not "
                    + picked.get().isolation() + " (a transaction it joined, or the connections' default): in any"
                    + " other the look for a live lease after the account's lock reuses the transaction's snapshot"
                    + " and could miss a lease taken meanwhile");
        }
        Binds leaseBinds = statements
                .lease
                .binds()
                .set(PoolStatements.KEY, picked.get().publicKey())
                .set(PoolStatements.OWNER, holder)
                .setInterval(PoolStatements.LEASE, lease);
        if (statements.distributed) {
            leaseBinds.set(PoolStatements.BUCKET, picked.get().bucket());
            Binds check = statements
                    .leased
                    .binds()
                    .set(PoolStatements.KEY, picked.get().publicKey())
                    .set(PoolStatements.BUCKET, picked.get().bucket());
            if (statements.leased.fetchOptional(tx, check, row -> true).isPresent()) {
                return Try.LOST;
            }
        }
        Optional<ChannelAccount> account = statements.lease.fetchOptional(tx, leaseBinds, PoolStatements::account);
        return account.isPresent() ? new Try(account, false) : Try.LOST;
    }
}

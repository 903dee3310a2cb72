package dev.locksmith.pool;

/**
 * How {@link ChannelAccountPool#acquire} picks an idle account. Both lock the chosen row with
 * {@code FOR UPDATE SKIP LOCKED} in the same statement that leases it, so two callers never get
 * the same account and never wait for each other.
 */
public enum AcquireStrategy {
    /**
     * Constant cost. Picks a uniformly random start between the smallest and largest
     * {@code slot} (two index look-ups), scans the partial index of idle accounts forward from
     * there, wraps around once, and finally takes the oldest expired lease. The cost is a few
     * index probes plus the leased rows it has to skip, independent of pool size. Every account
     * is equally likely when the pool is idle and slots are dense; after removals or while
     * accounts are leased, the account right after a gap is proportionally more likely.
     */
    RANDOM_START,
    /**
     * {@code ORDER BY random() LIMIT 1}: a perfectly uniform choice, but it reads and sorts every
     * idle row, so its cost grows linearly with the pool. Kept for comparison.
     */
    ORDER_BY_RANDOM
}

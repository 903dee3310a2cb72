package dev.locksmith.pool;

/**
 * How {@link ChannelAccountPool#acquire} picks an idle account. Both lock the chosen row with
 * {@code FOR UPDATE SKIP LOCKED} in the same statement that leases it, so two callers never get
 * the same account and never wait for each other.
 */
public enum AcquireStrategy {
    /**
     * Constant cost and an even spread; the default. Looks up 8 uniformly random slots by the
     * {@code slot} index ({@code slot = ANY(...)}), and of those that are idle and not being
     * taken by a concurrent acquirer picks the one least recently leased or released; only when
     * all 8 miss (leased, being taken, or a slot no account holds) does it fall back to
     * {@link #RANDOM_START}'s scan. Every idle account is equally likely to be probed, wherever
     * it sits and whatever gaps removals left, and preferring the less recently used of the
     * candidates evens the load out further than one random choice would: with half of 1,000
     * accounts leased at random, or after removing 100 contiguous ones, 20,000 acquisitions
     * spread over the idle accounts with a max/min selection ratio well under 3 (a single uniform
     * choice gives about 2.5 to 6 there). The cost is 8 index look-ups plus the fallback's when
     * the pool is nearly exhausted, independent of pool size. The fallback's bias (below) shows
     * only when most accounts are leased.
     */
    RANDOM_PROBES,
    /**
     * Constant cost. Picks a uniformly random start between the smallest and largest
     * {@code slot} (two index look-ups), scans the partial index of idle accounts forward from
     * there, wraps around once, and finally takes the oldest expired lease. The cost is a few
     * index probes plus the leased rows it has to skip, independent of pool size. Every account
     * is equally likely when the pool is idle and slots are dense; after removals or while
     * accounts are leased, the account right after a gap is proportionally more likely (with
     * half the pool leased at random the most-picked account was chosen 38 times as often as the
     * least-picked). Kept for comparison.
     */
    RANDOM_START,
    /**
     * {@code ORDER BY random() LIMIT 1}: a perfectly uniform choice, but it reads and sorts every
     * idle row, so its cost grows linearly with the pool. Kept for comparison.
     */
    ORDER_BY_RANDOM
}

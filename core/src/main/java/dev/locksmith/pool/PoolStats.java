package dev.locksmith.pool;

/**
 * Counts of a channel account pool at one moment.
 *
 * @param total accounts registered
 * @param idle never leased or released
 * @param leased holding an unexpired lease
 * @param expired holding a lease that has expired (acquirable)
 */
public record PoolStats(long total, long idle, long leased, long expired) {

    /**
     * Counts are never negative, and the parts never exceed the whole.
     *
     * @param total accounts in the pool
     * @param idle never leased or released
     * @param leased holding an unexpired lease
     * @param expired holding a lease that has expired
     * @throws IllegalArgumentException when the counts are negative or the parts exceed the whole
     */
    public PoolStats {
        if (idle < 0 || leased < 0 || expired < 0 || idle + leased > total) {
            throw new IllegalArgumentException("inconsistent pool counts: total " + total + ", idle " + idle
                    + ", leased " + leased + ", expired " + expired);
        }
    }
}

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
}

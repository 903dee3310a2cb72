package dev.locksmith.bench;

import java.util.Arrays;
import java.util.List;

/** Summary statistics of repeated measurements. */
public final class Stats {

    private Stats() {}

    /** The median (mean of the two middle values for an even count). */
    public static double median(List<Double> values) {
        double[] sorted = sorted(values);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    }

    /** The smallest value. */
    public static double min(List<Double> values) {
        return sorted(values)[0];
    }

    /** The largest value. */
    public static double max(List<Double> values) {
        double[] sorted = sorted(values);
        return sorted[sorted.length - 1];
    }

    /**
     * The {@code p}-th percentile (0 &lt; p &lt;= 100) of {@code sortedNanos} by the nearest-rank
     * method: the smallest value with at least p% of the values at or below it.
     */
    public static long percentile(long[] sortedNanos, double p) {
        if (sortedNanos.length == 0) {
            throw new IllegalArgumentException("no values");
        }
        if (!(p > 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile must be in (0, 100], was " + p);
        }
        int rank = (int) Math.ceil(p / 100.0 * sortedNanos.length);
        return sortedNanos[Math.max(0, rank - 1)];
    }

    private static double[] sorted(List<Double> values) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("no values");
        }
        double[] array = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(array);
        return array;
    }
}

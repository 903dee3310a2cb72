package dev.locksmith.bench;

import java.util.List;
import java.util.Map;

/**
 * How evenly acquisitions spread over the accounts that could be picked.
 *
 * @param maxOverMin selection count of the most-picked over the least-picked (infinite when one was never picked)
 * @param chiSquare Pearson's chi-square against a uniform choice
 * @param critical the chi-square value a uniform choice exceeds with probability 0.001
 */
record Spread(double maxOverMin, double chiSquare, double critical) {

    /** The spread of {@code counts}, one per pickable account. */
    static Spread of(List<Integer> counts) {
        if (counts.size() < 2) {
            return new Spread(Double.NaN, Double.NaN, Double.NaN);
        }
        double expected = counts.stream().mapToLong(Integer::longValue).sum() / (double) counts.size();
        double chi = 0;
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (int n : counts) {
            chi += (n - expected) * (n - expected) / expected;
            min = Math.min(min, n);
            max = Math.max(max, n);
        }
        return new Spread(min == 0 ? Double.POSITIVE_INFINITY : (double) max / min, chi, critical(counts.size() - 1));
    }

    /**
     * The upper 0.001 quantile of chi-square with {@code df} degrees of freedom, by the
     * Wilson-Hilferty approximation (within 0.1% for df in the hundreds).
     */
    static double critical(int df) {
        double z = 3.090232;
        double a = 2.0 / (9.0 * df);
        return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
    }

    Map<String, Double> figures() {
        return Map.of("max/min", maxOverMin, "chi2", chiSquare, "chi2crit", critical);
    }
}

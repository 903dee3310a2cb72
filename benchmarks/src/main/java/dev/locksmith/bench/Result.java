package dev.locksmith.bench;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One variant of one case, over all its runs.
 *
 * @param workload workload name
 * @param config the case's settings, e.g. {@code batch=10}
 * @param workers worker threads
 * @param variant {@code library} or {@code raw}
 * @param unit what was counted, e.g. {@code jobs/s}
 * @param throughput units per second of each run
 * @param p50Millis median latency over all runs, where measured
 * @param p99Millis 99th percentile latency over all runs, where measured
 * @param violations correctness violations seen (lost or duplicated work, money not conserved)
 * @param extras further medians, e.g. {@code enqueue jobs/s} or {@code retries per op}
 */
public record Result(String workload, String config, int workers, String variant, String unit, List<Double> throughput,
        Optional<Double> p50Millis, Optional<Double> p99Millis, long violations, Map<String, Double> extras) {

    /** Median throughput. */
    public double median() {
        return Stats.median(throughput);
    }

    /** Slowest run. */
    public double min() {
        return Stats.min(throughput);
    }

    /** Fastest run. */
    public double max() {
        return Stats.max(throughput);
    }
}

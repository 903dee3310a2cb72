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
 * @param variant {@link #LIBRARY}, {@link #LIBRARY_LISTENED}, {@link #LIBRARY_JDBC} or {@link #RAW}
 * @param unit what was counted, e.g. {@code jobs/s}
 * @param throughput units per second of each run
 * @param p50Millis median latency over all runs, where measured
 * @param p99Millis 99th percentile latency over all runs, where measured
 * @param violations correctness violations seen (lost or duplicated work, money not conserved)
 * @param extras further medians, e.g. {@code enqueue jobs/s}, {@code retries per op}, or
 *     {@link #CLIENT_CPU} (client CPU per unit of work, in microseconds)
 */
public record Result(
        String workload,
        String config,
        int workers,
        String variant,
        String unit,
        List<Double> throughput,
        Optional<Double> p50Millis,
        Optional<Double> p99Millis,
        long violations,
        Map<String, Double> extras) {

    /** The library in its default execution mode, on a configuration without listeners. */
    public static final String LIBRARY = "library";
    /** The library in its default execution mode with an {@code ExecuteListener}: through jOOQ. */
    public static final String LIBRARY_LISTENED = "library-listened";
    /** The library in {@code ExecutionMode.RAW_JDBC}. */
    public static final String LIBRARY_JDBC = "library-jdbc";
    /**
     * The extra holding the worker threads' CPU time per unit of work, in microseconds: the
     * client's share of the cost, much less sensitive than throughput to other load on the machine.
     */
    public static final String CLIENT_CPU = "client_us";

    /** Plain JDBC running the same SQL. */
    public static final String RAW = "raw";

    /** {@code pgbench} running the library's SQL: the statement's cost without a JVM client. */
    public static final String PGBENCH = "pgbench";

    /** {@code pgbench} running the plainest SQL that does the same job. */
    public static final String PGBENCH_PLAIN = "pgbench-plain";

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

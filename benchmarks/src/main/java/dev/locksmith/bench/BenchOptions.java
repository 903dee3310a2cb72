package dev.locksmith.bench;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How long and how often to measure.
 *
 * @param warmup run before measuring, discarded
 * @param duration measured time per run
 * @param runs repetitions of every case and variant (library and raw alternate which goes first)
 * @param workers worker counts to use instead of each workload's defaults; empty for the defaults
 * @param quick a reduced matrix (the demo)
 */
public record BenchOptions(
        Duration warmup, Duration duration, int runs, List<Integer> workers, boolean quick, List<String> only) {

    public BenchOptions {
        Objects.requireNonNull(warmup, "warmup");
        Objects.requireNonNull(duration, "duration");
        if (warmup.isNegative() || duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("warmup must be >= 0 and duration > 0");
        }
        if (runs < 1) {
            throw new IllegalArgumentException("runs must be at least 1, was " + runs);
        }
        workers = List.copyOf(workers);
        only = List.copyOf(only);
        for (int w : workers) {
            if (w < 1 || w > 256) {
                throw new IllegalArgumentException("workers must be between 1 and 256, was " + w);
            }
        }
    }

    /** The given worker counts, or {@code defaults} when none were given. */
    /** Options without a case filter. */
    public BenchOptions(Duration warmup, Duration duration, int runs, List<Integer> workers, boolean quick) {
        this(warmup, duration, runs, workers, quick, List.of());
    }

    /**
     * Whether a case with this configuration runs: every case when {@link #only()} is empty,
     * else those with a word of their configuration (such as {@code size=100} or
     * {@code batch=10}) equal to one of {@link #only()}; an entry joining words with {@code +}
     * ({@code random_probes+size=100}) needs all of them.
     */
    public boolean selects(String config) {
        List<String> words = List.of(config.split(" "));
        return only.isEmpty() || only.stream().anyMatch(o -> words.containsAll(List.of(o.split("\\+"))));
    }

    public List<Integer> workersOr(List<Integer> defaults) {
        return workers.isEmpty() ? defaults : workers;
    }
}

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
 * @param quick a reduced matrix (the demo and the smoke test)
 * @param only words of the cases' configurations to run ({@link #selects(String)}); empty for
 *     every case
 * @param variants the variants to run, by result name ({@link Result#LIBRARY}, {@link Result#RAW},
 *     ...); empty for every variant of a case
 * @param warmUpByRepeating whether a self-timed variant that asks for it is warmed up by discarded
 *     runs while the JIT compiler is busy ({@link Workload.SelfTimed#warmsUpByRepeating}), as a
 *     benchmark must be; false for a run that shows the workloads rather than measures them (the
 *     demo), whose every run then takes its fixed time
 */
public record BenchOptions(
        Duration warmup,
        Duration duration,
        int runs,
        List<Integer> workers,
        boolean quick,
        List<String> only,
        List<String> variants,
        boolean warmUpByRepeating) {

    /** The demo's variants: the library and the plain-JDBC baseline running the same SQL. */
    static final List<String> DEMO_VARIANTS = List.of(Result.LIBRARY, Result.RAW);

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
        variants = List.copyOf(variants);
        for (int w : workers) {
            if (w < 1 || w > 256) {
                throw new IllegalArgumentException("workers must be between 1 and 256, was " + w);
            }
        }
    }

    /** Options without a case filter, every variant, drains warmed up by repeated runs. */
    public BenchOptions(Duration warmup, Duration duration, int runs, List<Integer> workers, boolean quick) {
        this(warmup, duration, runs, workers, quick, List.of());
    }

    /** Options with a case filter, every variant, drains warmed up by repeated runs. */
    public BenchOptions(
            Duration warmup, Duration duration, int runs, List<Integer> workers, boolean quick, List<String> only) {
        this(warmup, duration, runs, workers, quick, only, List.of(), true);
    }

    /**
     * The demo's options: the reduced matrix, the library and the plain-JDBC baseline of every
     * case, one run of each, a fixed {@code warmup} and {@code duration} per run, no repeated
     * warm-up (it is for {@code bench}: on a loaded machine it repeated a drain for many seconds
     * while the JIT compiler was busy).
     */
    public static BenchOptions demo(Duration warmup, Duration duration) {
        return new BenchOptions(warmup, duration, 1, List.of(), true, List.of(), DEMO_VARIANTS, false);
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

    /** Whether the variant of result name {@code variant} runs: every variant when {@link #variants()} is empty. */
    public boolean runsVariant(String variant) {
        return variants.isEmpty() || variants.contains(variant);
    }

    /** The given worker counts, or {@code defaults} when none were given. */
    public List<Integer> workersOr(List<Integer> defaults) {
        return workers.isEmpty() ? defaults : workers;
    }
}

package dev.locksmith;

import dev.locksmith.internal.Durations;
import java.time.Duration;

/**
 * Exponential backoff with a cap and jitter: the pause after the n-th failure is
 * {@code min(max, initial * multiplier^(n-1))}, of which a random fraction of up to
 * {@code jitter} is taken off, so that many clients failing together do not retry together.
 *
 * @param initial pause after the first failure; zero or more, at most {@link Durations#MAX}
 * @param max cap on any pause; at least {@code initial}, at most {@link Durations#MAX}
 * @param multiplier growth per failure; at least 1
 * @param jitter largest fraction taken off at random, in [0, 1]
 */
public record Backoff(Duration initial, Duration max, double multiplier, double jitter) {

    /**
     * Validates the settings.
     *
     * @param initial pause after the first failure; zero or more, at most 100 years
     * @param max cap on any pause; at least {@code initial}, at most 100 years
     * @param multiplier growth per failure; finite, at least 1
     * @param jitter largest fraction taken off at random, in [0, 1]
     * @throws IllegalArgumentException naming the setting that is out of range
     * @throws NullPointerException when {@code initial} or {@code max} is null
     */
    public Backoff {
        Durations.nonNegative("initial", initial);
        Durations.nonNegative("max", max);
        if (max.compareTo(initial) < 0) {
            throw new IllegalArgumentException(
                    "max backoff (" + max + ") must not be less than initial (" + initial + ")");
        }
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
            throw new IllegalArgumentException("multiplier must be a finite number >= 1, was " + multiplier);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw new IllegalArgumentException("jitter must be in [0, 1], was " + jitter);
        }
    }

    /**
     * The pause after the {@code failures}-th failure (1-based).
     *
     * @param failures failures so far, at least 1
     * @param random a uniform value in [0, 1), such as {@code ThreadLocalRandom.current().nextDouble()};
     *     0 gives the full exponential value, values near 1 take off nearly all of {@code jitter}
     * @return between {@code (1 - jitter)} times and exactly {@code min(max, initial * multiplier^(failures-1))}
     * @throws IllegalArgumentException when {@code failures} is less than 1
     */
    // long to double: a pause loses precision only beyond 2^53 ns (104 days), far past any cap in use
    @SuppressWarnings("LongDoubleConversion")
    public Duration delay(int failures, double random) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures must be at least 1, was " + failures);
        }
        double nanos = initial.toNanos() * Math.pow(multiplier, failures - 1);
        nanos = Math.min(nanos, max.toNanos());
        return Duration.ofNanos((long) (nanos * (1.0 - jitter * random)));
    }
}

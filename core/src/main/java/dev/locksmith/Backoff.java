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

    public Backoff {
        Durations.nonNegative("initial", initial);
        Durations.nonNegative("max", max);
        if (max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("max backoff (" + max + ") must not be less than initial (" + initial + ")");
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
     * @param random a uniform value in [0, 1)
     */
    public Duration delay(int failures, double random) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures must be at least 1, was " + failures);
        }
        double nanos = initial.toNanos() * Math.pow(multiplier, failures - 1);
        nanos = Math.min(nanos, max.toNanos());
        return Duration.ofNanos((long) (nanos * (1.0 - jitter * random)));
    }
}

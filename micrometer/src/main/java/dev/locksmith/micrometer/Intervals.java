package dev.locksmith.micrometer;

import java.time.Duration;
import java.util.Objects;

/** The one check of a refresh interval, for every gauge binder. */
final class Intervals {

    static final Duration MAX = Duration.ofDays(1);

    private Intervals() {}

    static Duration refreshInterval(Duration interval) {
        Objects.requireNonNull(interval, "refreshInterval");
        if (interval.isNegative() || interval.isZero() || interval.compareTo(MAX) > 0) {
            throw new IllegalArgumentException(
                    "refreshInterval must be positive and at most " + MAX + ", was " + interval);
        }
        return interval;
    }
}

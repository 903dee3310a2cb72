package dev.locksmith.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * The one bound on every {@link Duration} the API takes (leases, waits, ages, backoffs, probe
 * timings): at most {@link #MAX}, 36,525 days (100 years). Anything longer is a mistake (or a
 * stand-in for "forever", which the API spells differently), and past it the values stop fitting
 * where they go: {@code Duration.toNanos()} overflows at about 292 years and
 * {@code now() + interval} leaves PostgreSQL's timestamp range. Checking here turns what would
 * be an {@code ArithmeticException} or a database error deep inside a call into an
 * {@link IllegalArgumentException} naming the parameter and the bound. <b>Internal: not API.</b>
 */
public final class Durations {

    /** The largest duration any locksmith call accepts: 36,525 days (100 years). */
    public static final Duration MAX = Duration.ofDays(36_525);

    private Durations() {}

    /** {@code value}, checked to be greater than zero and at most {@link #MAX}. */
    public static Duration positive(String name, Duration value) {
        Objects.requireNonNull(value, name);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
        return atMost(name, value);
    }

    /** {@code value}, checked to be zero or more and at most {@link #MAX}. */
    public static Duration nonNegative(String name, Duration value) {
        Objects.requireNonNull(value, name);
        if (value.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative, was " + value);
        }
        return atMost(name, value);
    }

    /** {@code value}, checked to be at most {@link #MAX}. */
    public static Duration atMost(String name, Duration value) {
        Objects.requireNonNull(value, name);
        if (value.compareTo(MAX) > 0) {
            throw new IllegalArgumentException(
                    name + " must be at most " + MAX.toDays() + " days (100 years), was " + value);
        }
        return value;
    }
}

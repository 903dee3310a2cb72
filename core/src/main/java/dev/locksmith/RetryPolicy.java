package dev.locksmith;

import dev.locksmith.internal.Durations;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * How a whole transaction is retried after a transient failure: how many attempts, how long
 * to back off between them (exponential, capped, with jitter), and which failures count.
 *
 * <p>Defaults ({@link #defaults()}): 5 attempts, 10 ms initial backoff doubling up to 1 s,
 * jitter 0.5 (each delay is drawn uniformly from the upper half of the exponential value),
 * retrying deadlocks and serialization failures. Lock timeouts are retried only when asked
 * ({@link Builder#retryOn(Failure...)}), because a caller who bounded a wait usually wants to
 * hear that it expired.
 */
public final class RetryPolicy {

    /** Transient failures a policy can retry. */
    public enum Failure {
        /** {@code 40P01}, {@link DeadlockException}. */
        DEADLOCK,
        /** {@code 40001}, {@link SerializationFailureException}. */
        SERIALIZATION_FAILURE,
        /** {@code 55P03}, {@link LockNotAvailableException}. */
        LOCK_NOT_AVAILABLE
    }

    private static final RetryPolicy DEFAULTS = builder().build();

    private final int maxAttempts;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final double multiplier;
    private final double jitter;
    private final Set<Failure> retryOn;
    private final Backoff backoff;

    private RetryPolicy(Builder b) {
        this.maxAttempts = b.maxAttempts;
        this.initialBackoff = b.initialBackoff;
        this.maxBackoff = b.maxBackoff;
        this.multiplier = b.multiplier;
        this.jitter = b.jitter;
        this.retryOn = Set.copyOf(b.retryOn);
        this.backoff = new Backoff(initialBackoff, maxBackoff, multiplier, jitter);
    }

    /** 5 attempts, 10 ms doubling to 1 s, jitter 0.5, deadlocks and serialization failures. */
    public static RetryPolicy defaults() {
        return DEFAULTS;
    }

    /** One attempt: failures are reported at once. */
    public static RetryPolicy noRetry() {
        return builder().maxAttempts(1).build();
    }

    /** A builder starting from the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Total attempts, including the first. */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** The failures this policy retries. */
    public Set<Failure> retryOn() {
        return retryOn;
    }

    /**
     * Whether {@code failure} (already translated) is one this policy retries. Attempts left
     * are not considered here.
     */
    public boolean isRetryable(LocksmithException failure) {
        if (failure instanceof DeadlockException) {
            return retryOn.contains(Failure.DEADLOCK);
        }
        if (failure instanceof SerializationFailureException) {
            return retryOn.contains(Failure.SERIALIZATION_FAILURE);
        }
        if (failure instanceof LockNotAvailableException) {
            return retryOn.contains(Failure.LOCK_NOT_AVAILABLE);
        }
        return false;
    }

    /**
     * The pause after the {@code failedAttempts}-th failure (1-based):
     * {@code min(max, initial * multiplier^(failedAttempts-1))}, of which a random fraction
     * of up to {@code jitter} is taken off.
     *
     * @param random a uniform value in [0, 1)
     */
    public Duration backoff(int failedAttempts, double random) {
        if (failedAttempts < 1) {
            throw new IllegalArgumentException("failedAttempts must be at least 1, was " + failedAttempts);
        }
        return backoff.delay(failedAttempts, random);
    }

    @Override
    public String toString() {
        return "RetryPolicy[maxAttempts=" + maxAttempts + ", initialBackoff=" + initialBackoff + ", maxBackoff="
                + maxBackoff + ", multiplier=" + multiplier + ", jitter=" + jitter + ", retryOn=" + retryOn + "]";
    }

    /** Builds a {@link RetryPolicy}; every setter validates its argument at once. */
    public static final class Builder {
        private int maxAttempts = 5;
        private Duration initialBackoff = Duration.ofMillis(10);
        private Duration maxBackoff = Duration.ofSeconds(1);
        private double multiplier = 2.0;
        private double jitter = 0.5;
        private EnumSet<Failure> retryOn = EnumSet.of(Failure.DEADLOCK, Failure.SERIALIZATION_FAILURE);

        private Builder() {
        }

        /** Total attempts including the first; at least 1. Default 5. */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** Pause after the first failure; zero or more, at most 100 years. Default 10 ms. */
        public Builder initialBackoff(Duration initialBackoff) {
            Durations.nonNegative("initialBackoff", initialBackoff);
            this.initialBackoff = initialBackoff;
            return this;
        }

        /** Cap on any pause; zero or more, at most 100 years. Default 1 s. */
        public Builder maxBackoff(Duration maxBackoff) {
            Durations.nonNegative("maxBackoff", maxBackoff);
            this.maxBackoff = maxBackoff;
            return this;
        }

        /** Growth factor between pauses; at least 1. Default 2. */
        public Builder multiplier(double multiplier) {
            if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
                throw new IllegalArgumentException("multiplier must be a finite number >= 1, was " + multiplier);
            }
            this.multiplier = multiplier;
            return this;
        }

        /** Largest fraction randomly taken off a pause, in [0, 1]; 0 disables jitter. Default 0.5. */
        public Builder jitter(double jitter) {
            if (!(jitter >= 0.0 && jitter <= 1.0)) {
                throw new IllegalArgumentException("jitter must be in [0, 1], was " + jitter);
            }
            this.jitter = jitter;
            return this;
        }

        /** The failures to retry; replaces the default set. May be empty (retry nothing). */
        public Builder retryOn(Failure... failures) {
            Objects.requireNonNull(failures, "failures");
            EnumSet<Failure> set = EnumSet.noneOf(Failure.class);
            for (Failure f : failures) {
                set.add(Objects.requireNonNull(f, "failure"));
            }
            this.retryOn = set;
            return this;
        }

        /** The policy. */
        public RetryPolicy build() {
            if (maxBackoff.compareTo(initialBackoff) < 0) {
                throw new IllegalArgumentException("maxBackoff (" + maxBackoff + ") must not be less than initialBackoff ("
                        + initialBackoff + ")");
            }
            return new RetryPolicy(this);
        }
    }
}

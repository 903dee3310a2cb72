package dev.locksmith;

import dev.locksmith.exception.CommitOutcomeUnknownException;
import dev.locksmith.exception.DeadlockException;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.exception.PgErrors;
import dev.locksmith.exception.SerializationFailureException;
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
 * hear that it expired. A {@code COMMIT} whose connection failed has its outcome looked for
 * for up to 5 s ({@link Builder#commitResolution(Duration)}); retries are reported to no one
 * unless a {@link Builder#listener(RetryListener) listener} is set.
 *
 * <p>It is the one settings object of {@link Transactions} and of
 * {@code dev.locksmith.accounts.Accounts}. Immutable and thread-safe.
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

    /** Default of {@link Builder#commitResolution(Duration)}: 5 seconds. */
    public static final Duration DEFAULT_COMMIT_RESOLUTION = Duration.ofSeconds(5);

    private static final Duration MAX_COMMIT_RESOLUTION = Duration.ofHours(1);

    private static final RetryPolicy DEFAULTS = builder().build();

    private final int maxAttempts;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final double multiplier;
    private final double jitter;
    private final Set<Failure> retryOn;
    private final Duration commitResolution;
    private final RetryListener listener;
    private final Backoff backoff;

    private RetryPolicy(Builder b) {
        this.maxAttempts = b.maxAttempts;
        this.initialBackoff = b.initialBackoff;
        this.maxBackoff = b.maxBackoff;
        this.multiplier = b.multiplier;
        this.jitter = b.jitter;
        this.retryOn = Set.copyOf(b.retryOn);
        this.commitResolution = b.commitResolution;
        this.listener = b.listener;
        this.backoff = new Backoff(initialBackoff, maxBackoff, multiplier, jitter);
    }

    /**
     * The policy repositories use when given none.
     *
     * @return 5 attempts, 10 ms doubling to 1 s, jitter 0.5, deadlocks and serialization
     *     failures retried, 5 s of commit resolution, no listener
     */
    public static RetryPolicy defaults() {
        return DEFAULTS;
    }

    /**
     * One attempt: failures are reported at once, for callers that retry on their own terms (or
     * must not retry at all). Commit resolution stays on: a failed {@code COMMIT} is still looked
     * up, so a committed transaction is not reported as failed.
     *
     * @return the defaults with {@code maxAttempts} 1
     */
    public static RetryPolicy noRetry() {
        return builder().maxAttempts(1).build();
    }

    /** {@return a builder starting from the {@linkplain #defaults() defaults}} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder holding this policy's settings, to derive a variant.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxAttempts = maxAttempts;
        b.initialBackoff = initialBackoff;
        b.maxBackoff = maxBackoff;
        b.multiplier = multiplier;
        b.jitter = jitter;
        b.retryOn = retryOn.isEmpty() ? EnumSet.noneOf(Failure.class) : EnumSet.copyOf(retryOn);
        b.commitResolution = commitResolution;
        b.listener = listener;
        return b;
    }

    /** {@return total attempts, including the first; at least 1} */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** {@return the failures this policy retries; immutable, possibly empty} */
    public Set<Failure> retryOn() {
        return retryOn;
    }

    /**
     * How long the outcome of a {@code COMMIT} whose connection failed is looked for.
     *
     * @return zero (no look-up) to one hour; 5 s by default
     */
    public Duration commitResolution() {
        return commitResolution;
    }

    /**
     * Who hears of retries.
     *
     * @return the listener; {@link RetryListener#NONE} by default
     */
    public RetryListener listener() {
        return listener;
    }

    /**
     * Whether {@code failure} (already translated) is one this policy retries. Attempts left
     * are not considered here.
     *
     * @param failure a translated failure, such as {@link PgErrors#translate(Throwable)} returns
     * @return true for a {@link DeadlockException}, {@link SerializationFailureException} or
     *     {@link LockNotAvailableException} whose {@link Failure} is in {@link #retryOn()}; false
     *     for everything else, including every non-transient failure
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
     * @param failedAttempts attempts that failed so far, at least 1
     * @param random a uniform value in [0, 1)
     * @return how long to pause before the next attempt
     * @throws IllegalArgumentException when {@code failedAttempts} is less than 1
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
                + maxBackoff + ", multiplier=" + multiplier + ", jitter=" + jitter + ", retryOn=" + retryOn
                + ", commitResolution=" + commitResolution + "]";
    }

    /** Builds a {@link RetryPolicy}; every setter validates its argument at once. */
    public static final class Builder {
        private int maxAttempts = 5;
        private Duration initialBackoff = Duration.ofMillis(10);
        private Duration maxBackoff = Duration.ofSeconds(1);
        private double multiplier = 2.0;
        private double jitter = 0.5;
        private EnumSet<Failure> retryOn = EnumSet.of(Failure.DEADLOCK, Failure.SERIALIZATION_FAILURE);
        private Duration commitResolution = DEFAULT_COMMIT_RESOLUTION;
        private RetryListener listener = RetryListener.NONE;

        private Builder() {}

        /**
         * Total attempts including the first. Default 5.
         *
         * @param maxAttempts at least 1; 1 means no retry
         * @return this builder
         * @throws IllegalArgumentException when less than 1
         */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * Pause after the first failure. Default 10 ms.
         *
         * @param initialBackoff zero or more, at most 100 years; not more than the
         *     {@linkplain #maxBackoff(Duration) cap} (checked by {@link #build()})
         * @return this builder
         * @throws IllegalArgumentException when negative or longer than 100 years
         */
        public Builder initialBackoff(Duration initialBackoff) {
            Durations.nonNegative("initialBackoff", initialBackoff);
            this.initialBackoff = initialBackoff;
            return this;
        }

        /**
         * Cap on any pause. Default 1 s.
         *
         * @param maxBackoff zero or more, at most 100 years; at least the
         *     {@linkplain #initialBackoff(Duration) initial pause} (checked by {@link #build()})
         * @return this builder
         * @throws IllegalArgumentException when negative or longer than 100 years
         */
        public Builder maxBackoff(Duration maxBackoff) {
            Durations.nonNegative("maxBackoff", maxBackoff);
            this.maxBackoff = maxBackoff;
            return this;
        }

        /**
         * Growth factor between pauses. Default 2.
         *
         * @param multiplier finite, at least 1; 1 makes every pause {@code initialBackoff}
         * @return this builder
         * @throws IllegalArgumentException when less than 1, infinite or NaN
         */
        public Builder multiplier(double multiplier) {
            if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
                throw new IllegalArgumentException("multiplier must be a finite number >= 1, was " + multiplier);
            }
            this.multiplier = multiplier;
            return this;
        }

        /**
         * Largest fraction randomly taken off a pause, so that clients that failed together do
         * not retry together. Default 0.5.
         *
         * @param jitter in [0, 1]; 0 disables jitter
         * @return this builder
         * @throws IllegalArgumentException when outside [0, 1] or NaN
         */
        public Builder jitter(double jitter) {
            if (!(jitter >= 0.0 && jitter <= 1.0)) {
                throw new IllegalArgumentException("jitter must be in [0, 1], was " + jitter);
            }
            this.jitter = jitter;
            return this;
        }

        /**
         * The failures to retry; replaces the default set (deadlocks and serialization failures).
         *
         * @param failures no null elements; none at all means retry nothing
         * @return this builder
         */
        public Builder retryOn(Failure... failures) {
            Objects.requireNonNull(failures, "failures");
            EnumSet<Failure> set = EnumSet.noneOf(Failure.class);
            for (Failure f : failures) {
                set.add(Objects.requireNonNull(f, "failure"));
            }
            this.retryOn = set;
            return this;
        }

        /**
         * How long to look for the outcome of a {@code COMMIT} whose connection failed (default
         * 5 s). A new connection asks {@code pg_xact_status} until the server can tell:
         * committed counts as success, aborted as the failure it is. {@link Duration#ZERO} turns
         * the look-up off, and with it the extra round trip before each {@code COMMIT} of a
         * transaction whose statements did not report its id: such a failure is then always a
         * {@link CommitOutcomeUnknownException}.
         *
         * @param timeout zero to one hour
         * @return this builder
         */
        public Builder commitResolution(Duration timeout) {
            Objects.requireNonNull(timeout, "commitResolution");
            if (timeout.isNegative() || timeout.compareTo(MAX_COMMIT_RESOLUTION) > 0) {
                throw new IllegalArgumentException(
                        "commitResolution must be between 0 and " + MAX_COMMIT_RESOLUTION + ", was " + timeout);
            }
            this.commitResolution = timeout;
            return this;
        }

        /**
         * Who hears of each retry, before its pause (metrics, logs). Default: no one.
         *
         * @param listener called on the retrying thread; must be quick and must not throw
         * @return this builder
         */
        public Builder listener(RetryListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * The policy.
         *
         * @return an immutable policy with this builder's settings; later changes to the builder
         *     do not affect it
         * @throws IllegalArgumentException when {@code maxBackoff} is less than {@code initialBackoff}
         */
        public RetryPolicy build() {
            if (maxBackoff.compareTo(initialBackoff) < 0) {
                throw new IllegalArgumentException("maxBackoff (" + maxBackoff
                        + ") must not be less than initialBackoff (" + initialBackoff + ")");
            }
            return new RetryPolicy(this);
        }
    }
}

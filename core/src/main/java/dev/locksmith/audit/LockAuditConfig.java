package dev.locksmith.audit;

import dev.locksmith.internal.Durations;
import java.time.Duration;
import java.util.Optional;

/**
 * Settings of a {@link LockAudit}, built with {@link #builder()}. Immutable.
 *
 * <p>Defaults ({@link #defaults()}): only failed waits are recorded; the audit starts asking
 * who blocks a guarded statement after 50 ms and asks again every 100 ms; up to 10,000 rows
 * wait for the writer thread.
 */
public final class LockAuditConfig {

    /** Default of {@link Builder#bufferSize(int)}. */
    public static final int DEFAULT_BUFFER_SIZE = 10_000;

    private static final int MAX_BUFFER_SIZE = 1_000_000;

    private static final LockAuditConfig DEFAULTS = builder().build();

    private final Optional<Duration> slowWaitThreshold;
    private final Duration probeDelay;
    private final Duration probeInterval;
    private final int bufferSize;

    private LockAuditConfig(Builder b) {
        this.slowWaitThreshold = b.slowWaitThreshold;
        this.probeDelay = b.probeDelay;
        this.probeInterval = b.probeInterval;
        this.bufferSize = b.bufferSize;
    }

    /**
     * The defaults listed on the class.
     *
     * @return the default settings
     */
    public static LockAuditConfig defaults() {
        return DEFAULTS;
    }

    /**
     * A builder starting from the defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Successful waits at least this long are recorded too; empty records only failures.
     *
     * @return the threshold, if any
     */
    public Optional<Duration> slowWaitThreshold() {
        return slowWaitThreshold;
    }

    /**
     * How long a guarded statement may wait before the audit asks who blocks it.
     *
     * @return the delay
     */
    public Duration probeDelay() {
        return probeDelay;
    }

    /**
     * How often the audit asks again while the wait goes on.
     *
     * @return the interval
     */
    public Duration probeInterval() {
        return probeInterval;
    }

    /**
     * How many audit rows may wait for the writer thread.
     *
     * @return the capacity
     */
    public int bufferSize() {
        return bufferSize;
    }

    /**
     * A builder holding these settings, to derive a variant.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.slowWaitThreshold = slowWaitThreshold;
        b.probeDelay = probeDelay;
        b.probeInterval = probeInterval;
        b.bufferSize = bufferSize;
        return b;
    }

    @Override
    public String toString() {
        return "LockAuditConfig[slowWaitThreshold=" + slowWaitThreshold + ", probeDelay=" + probeDelay
                + ", probeInterval=" + probeInterval + ", bufferSize=" + bufferSize + "]";
    }

    /** Builds a {@link LockAuditConfig}; each setter validates its argument. */
    public static final class Builder {
        private Optional<Duration> slowWaitThreshold = Optional.empty();
        private Duration probeDelay = Duration.ofMillis(50);
        private Duration probeInterval = Duration.ofMillis(100);
        private int bufferSize = DEFAULT_BUFFER_SIZE;

        private Builder() {}

        /**
         * Also record waits that succeeded but took at least {@code threshold} (default: record
         * failures only).
         *
         * @param threshold a positive duration
         * @return this builder
         */
        public Builder slowWaitThreshold(Duration threshold) {
            this.slowWaitThreshold = Optional.of(Durations.positive("slowWaitThreshold", threshold));
            return this;
        }

        /**
         * How long a guarded statement may wait before the audit starts asking
         * {@code pg_blocking_pids()} who blocks it (default 50 ms; statements that finish sooner
         * cost nothing extra).
         *
         * @param delay a positive duration
         * @return this builder
         */
        public Builder probeDelay(Duration delay) {
            this.probeDelay = Durations.positive("probeDelay", delay);
            return this;
        }

        /**
         * How often the audit asks again while the wait goes on (default 100 ms).
         *
         * @param interval a positive duration
         * @return this builder
         */
        public Builder probeInterval(Duration interval) {
            this.probeInterval = Durations.positive("probeInterval", interval);
            return this;
        }

        /**
         * How many audit rows may wait for the writer thread (default 10,000); rows beyond it are
         * dropped and counted in {@link LockAudit#droppedRows()}.
         *
         * @param size 1 to 1,000,000
         * @return this builder
         */
        public Builder bufferSize(int size) {
            if (size < 1 || size > MAX_BUFFER_SIZE) {
                throw new IllegalArgumentException(
                        "bufferSize must be between 1 and " + MAX_BUFFER_SIZE + ", was " + size);
            }
            this.bufferSize = size;
            return this;
        }

        /**
         * The settings.
         *
         * @return an immutable config
         */
        public LockAuditConfig build() {
            return new LockAuditConfig(this);
        }
    }
}

package dev.locksmith.schedules;

import dev.locksmith.internal.Durations;
import dev.locksmith.jobs.JobQueueConfig;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of {@link Schedules} (and of the {@link SchedulerWorker} that ticks it), built with
 * {@link #builder()}. Immutable.
 *
 * <p>Defaults ({@link #defaults()}): the database clock, a misfire grace of 1 minute, at most
 * 1,000 jobs per schedule and tick for {@link MisfirePolicy#RUN_ALL}, 100 schedules per tick
 * transaction, and {@link JobQueueConfig#defaults()} for the queue the jobs go to.
 */
public final class SchedulesConfig {

    private static final SchedulesConfig DEFAULTS = builder().build();

    private final Optional<Clock> clock;
    private final Duration misfireGrace;
    private final int maxCatchUp;
    private final int batchSize;
    private final JobQueueConfig queueConfig;

    private SchedulesConfig(Builder b) {
        this.clock = b.clock;
        this.misfireGrace = b.misfireGrace;
        this.maxCatchUp = b.maxCatchUp;
        this.batchSize = b.batchSize;
        this.queueConfig = b.queueConfig;
    }

    /**
     * The defaults listed on the class.
     *
     * @return the default settings
     */
    public static SchedulesConfig defaults() {
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
     * The clock that says what time it is; empty for the database clock ({@code now()}), which
     * every JVM shares.
     *
     * @return the clock, or empty for the database's
     */
    public Optional<Clock> clock() {
        return clock;
    }

    /**
     * How late the latest due occurrence may be found and still count as on time (see
     * {@link MisfirePolicy}).
     *
     * @return the grace
     */
    public Duration misfireGrace() {
        return misfireGrace;
    }

    /**
     * The most jobs a tick enqueues for one schedule under {@link MisfirePolicy#RUN_ALL}.
     *
     * @return the cap
     */
    public int maxCatchUp() {
        return maxCatchUp;
    }

    /**
     * The most schedules one tick transaction locks and handles; a tick runs more transactions
     * while it finds full batches.
     *
     * @return the batch size
     */
    public int batchSize() {
        return batchSize;
    }

    /**
     * The settings of the {@link dev.locksmith.jobs.JobQueue} the occurrences are enqueued with
     * (NOTIFY on enqueue, by default).
     *
     * @return the queue settings
     */
    public JobQueueConfig queueConfig() {
        return queueConfig;
    }

    /**
     * A builder holding these settings, to derive a variant.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.clock = clock;
        b.misfireGrace = misfireGrace;
        b.maxCatchUp = maxCatchUp;
        b.batchSize = batchSize;
        b.queueConfig = queueConfig;
        return b;
    }

    @Override
    public String toString() {
        return "SchedulesConfig[clock=" + clock.map(Object::toString).orElse("database") + ", misfireGrace="
                + misfireGrace + ", maxCatchUp=" + maxCatchUp + ", batchSize=" + batchSize + ", queueConfig="
                + queueConfig + "]";
    }

    /** Builds a {@link SchedulesConfig}; each setter validates its argument. */
    public static final class Builder {
        private Optional<Clock> clock = Optional.empty();
        private Duration misfireGrace = Duration.ofMinutes(1);
        private int maxCatchUp = 1000;
        private int batchSize = 100;
        private JobQueueConfig queueConfig = JobQueueConfig.defaults();

        private Builder() {}

        /**
         * Read the time from {@code clock} instead of the database ({@code now()}, the default).
         * For tests that move time on, and for callers whose JVM clocks are kept in step: every
         * scheduler of a database should read the same time, or one whose clock runs ahead
         * enqueues occurrences early (never twice: see {@link Schedules}).
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Optional.of(Objects.requireNonNull(clock, "clock"));
            return this;
        }

        /**
         * How late the latest due occurrence may be found and still count as on time, rather
         * than missed (default 1 minute). Keep it above the tick interval plus the longest pause
         * a tick may suffer (a garbage collection, a slow database), or
         * {@link MisfirePolicy#SKIP} drops occurrences that were merely found late.
         *
         * @param grace zero or more, at most 100 years
         * @return this builder
         * @throws IllegalArgumentException when negative or too long
         */
        public Builder misfireGrace(Duration grace) {
            this.misfireGrace = Durations.nonNegative("misfireGrace", grace);
            return this;
        }

        /**
         * The most jobs a tick enqueues for one schedule under {@link MisfirePolicy#RUN_ALL}
         * (default 1,000): after long downtime of a frequent schedule the latest ones are
         * enqueued and the older ones dropped, with a WARN.
         *
         * @param maxCatchUp 1 to 100,000
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder maxCatchUp(int maxCatchUp) {
            if (maxCatchUp < 1 || maxCatchUp > 100_000) {
                throw new IllegalArgumentException("maxCatchUp must be between 1 and 100000, was " + maxCatchUp);
            }
            this.maxCatchUp = maxCatchUp;
            return this;
        }

        /**
         * The most schedules one tick transaction locks and handles (default 100). Smaller
         * batches hold fewer row locks for a shorter time.
         *
         * @param batchSize 1 to 10,000
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > 10_000) {
                throw new IllegalArgumentException("batchSize must be between 1 and 10000, was " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /**
         * The settings of the queue the occurrences are enqueued with; default
         * {@link JobQueueConfig#defaults()} (NOTIFY on enqueue, so idle workers wake at once).
         *
         * @param queueConfig the queue settings
         * @return this builder
         */
        public Builder queueConfig(JobQueueConfig queueConfig) {
            this.queueConfig = Objects.requireNonNull(queueConfig, "queueConfig");
            return this;
        }

        /**
         * The settings.
         *
         * @return an immutable config
         */
        public SchedulesConfig build() {
            return new SchedulesConfig(this);
        }
    }
}

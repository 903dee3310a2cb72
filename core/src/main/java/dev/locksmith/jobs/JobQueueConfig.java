package dev.locksmith.jobs;

import dev.locksmith.Backoff;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link JobQueue}, built with {@link #builder()}. Immutable.
 *
 * <p>Defaults ({@link #defaults()}): completed jobs are deleted, an enqueue wakes idle workers
 * once it has committed ({@link WakeUp#AFTER_COMMIT}), a failed job is retried after 1 s doubling
 * to 1 h, with jitter 0.5, and typed payloads are encoded by {@link JobCodec#standard()}.
 */
public final class JobQueueConfig {

    private static final JobQueueConfig DEFAULTS = builder().build();

    private final boolean keepCompleted;
    private final WakeUp wakeUp;
    private final Backoff retryBackoff;
    private final JobCodec codec;

    private JobQueueConfig(Builder b) {
        this.keepCompleted = b.keepCompleted;
        this.wakeUp = b.wakeUp;
        this.retryBackoff = b.retryBackoff;
        this.codec = b.codec;
    }

    /**
     * The defaults listed on the class.
     *
     * @return the default settings
     */
    public static JobQueueConfig defaults() {
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
     * Whether completed jobs are kept as {@code done} in the history table rather than deleted.
     *
     * @return true to keep them
     */
    public boolean keepCompleted() {
        return keepCompleted;
    }

    /**
     * How an enqueue wakes idle workers.
     *
     * @return the wake-up
     */
    public WakeUp wakeUp() {
        return wakeUp;
    }

    /**
     * The pause before a failed job is retried.
     *
     * @return the backoff
     */
    public Backoff retryBackoff() {
        return retryBackoff;
    }

    /**
     * The codec that encodes the payloads of typed jobs ({@link JobQueue#enqueue(org.jooq.DSLContext,
     * JobType, Object)}).
     *
     * @return the codec
     */
    public JobCodec codec() {
        return codec;
    }

    /**
     * A builder holding these settings, to derive a variant.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.keepCompleted = keepCompleted;
        b.wakeUp = wakeUp;
        b.retryBackoff = retryBackoff;
        b.codec = codec;
        return b;
    }

    @Override
    public String toString() {
        return "JobQueueConfig[keepCompleted=" + keepCompleted + ", wakeUp=" + wakeUp + ", retryBackoff=" + retryBackoff
                + ", codec=" + codec + "]";
    }

    /** Builds a {@link JobQueueConfig}; each setter validates its argument. */
    public static final class Builder {
        private boolean keepCompleted;
        private WakeUp wakeUp = WakeUp.AFTER_COMMIT;
        private Backoff retryBackoff = new Backoff(Duration.ofSeconds(1), Duration.ofHours(1), 2.0, 0.5);
        private JobCodec codec = JobCodec.standard();

        private Builder() {}

        /**
         * Keep completed jobs as {@code done} (for retention and audit) instead of deleting them
         * (default false). A kept job leaves the hot jobs table as it completes: the completing
         * statement moves it into the history table ({@code job_history}, partitioned by the day
         * it finished), where {@link JobQueue#find} still reads it and
         * {@link JobQueue#deleteFinishedOlderThan} expires it by dropping whole days. Applies to
         * every completion: leased ({@link JobQueue#complete}, the workers' batched completion),
         * two-phase, and a {@link TransactionalWorker}'s, which records the jobs its claim deleted
         * in the claiming transaction. Failed-for-good and cancelled jobs always go to the history.
         *
         * @param keep true to keep them
         * @return this builder
         */
        public Builder keepCompleted(boolean keep) {
            this.keepCompleted = keep;
            return this;
        }

        /**
         * How an enqueue (and a {@link JobQueue#retry}) wakes idle workers: with
         * {@code NOTIFY locksmith_jobs, '<queue>'} after it committed, on a connection of the
         * queue's own (default {@link WakeUp#AFTER_COMMIT}), inside the producer's transaction, or
         * not at all. Workers poll regardless ({@code pollInterval}).
         *
         * @param wakeUp the wake-up
         * @return this builder
         */
        public Builder wakeUp(WakeUp wakeUp) {
            this.wakeUp = Objects.requireNonNull(wakeUp, "wakeUp");
            return this;
        }

        /**
         * The pause before a failed job is retried (default 1 s doubling to 1 h, jitter 0.5).
         *
         * @param backoff the backoff
         * @return this builder
         */
        public Builder retryBackoff(Backoff backoff) {
            this.retryBackoff = Objects.requireNonNull(backoff, "retryBackoff");
            return this;
        }

        /**
         * The codec that encodes typed payloads (default {@link JobCodec#standard()}, Jackson); the
         * workers' {@link JobHandlers} must decode with the same.
         *
         * @param codec the codec
         * @return this builder
         */
        public Builder codec(JobCodec codec) {
            this.codec = Objects.requireNonNull(codec, "codec");
            return this;
        }

        /**
         * The settings.
         *
         * @return an immutable config
         */
        public JobQueueConfig build() {
            return new JobQueueConfig(this);
        }
    }
}

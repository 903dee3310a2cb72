package dev.locksmith.jobs;

import dev.locksmith.Backoff;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link JobQueue}.
 *
 * @param keepCompleted keep completed jobs as {@code done} (for retention and audit) instead of
 *     deleting them; default false
 * @param notifyOnEnqueue send {@code NOTIFY locksmith_jobs, '<queue>'} with every enqueue, so idle
 *     workers wake at once (delivered on commit); default true
 * @param retryBackoff pause before a failed job is retried: default 1 s doubling to 1 h, jitter 0.5
 */
public record JobQueueConfig(boolean keepCompleted, boolean notifyOnEnqueue, Backoff retryBackoff) {

    public JobQueueConfig {
        Objects.requireNonNull(retryBackoff, "retryBackoff");
    }

    /** The defaults listed on the record. */
    public static JobQueueConfig defaults() {
        return new JobQueueConfig(false, true, new Backoff(Duration.ofSeconds(1), Duration.ofHours(1), 2.0, 0.5));
    }

    /** A copy with {@code keepCompleted} set. */
    public JobQueueConfig withKeepCompleted(boolean keep) {
        return new JobQueueConfig(keep, notifyOnEnqueue, retryBackoff);
    }

    /** A copy with {@code notifyOnEnqueue} set. */
    public JobQueueConfig withNotifyOnEnqueue(boolean notify) {
        return new JobQueueConfig(keepCompleted, notify, retryBackoff);
    }

    /** A copy with {@code retryBackoff} set. */
    public JobQueueConfig withRetryBackoff(Backoff backoff) {
        return new JobQueueConfig(keepCompleted, notifyOnEnqueue, backoff);
    }
}

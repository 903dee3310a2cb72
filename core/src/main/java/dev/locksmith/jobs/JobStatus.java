package dev.locksmith.jobs;

import java.util.Locale;

/** Life cycle of a job row. */
public enum JobStatus {
    /** Waiting to be claimed once {@code run_at} has passed. */
    PENDING,
    /** Claimed under a lease by a worker (leased mode only). */
    RUNNING,
    /** Completed and kept for retention ({@link JobQueueConfig#keepCompleted()}). */
    DONE,
    /** Gave up after {@code max_attempts}; {@code last_error} says why. */
    FAILED,
    /** Cancelled before it completed. */
    CANCELLED;

    /** {@return the value stored in {@code jobs.status}: the constant's name in lower case} */
    public String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }
}

package dev.locksmith.jobs;

import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link JobQueue#fail} did.
 *
 * @param outcome retried later, failed for good, or refused because the caller's lease is gone
 * @param retryAt when a retried job becomes claimable again
 */
public record FailResult(Outcome outcome, Optional<OffsetDateTime> retryAt) {

    /**
     * A retry time exactly when a retry was scheduled.
     *
     * @param outcome what happened; not null
     * @param retryAt when the job may run again: present exactly for RETRY_SCHEDULED
     * @throws IllegalArgumentException when retryAt and the outcome disagree
     */
    public FailResult {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(retryAt, "retryAt");
        if (retryAt.isPresent() != (outcome == Outcome.RETRY_SCHEDULED)) {
            throw new IllegalArgumentException("retryAt must be present exactly when the outcome is RETRY_SCHEDULED; "
                    + outcome + " with retryAt " + retryAt);
        }
    }

    /** The three outcomes. */
    public enum Outcome {
        /** Back to {@code pending}, claimable again at {@link FailResult#retryAt()}. */
        RETRY_SCHEDULED,
        /** {@code max_attempts} reached: now {@code failed}. */
        FAILED,
        /** The caller no longer holds the lease (expired and rescued, cancelled, deleted); nothing changed. */
        LEASE_LOST
    }
}

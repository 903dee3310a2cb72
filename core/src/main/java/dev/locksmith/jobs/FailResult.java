package dev.locksmith.jobs;

import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link JobQueue#fail} did, or what a worker did with a job whose handler threw (a failure
 * or a {@link JobControl}).
 *
 * @param outcome retried later, failed for good, snoozed, cancelled, or refused because the
 *     caller's lease is gone
 * @param retryAt when a retried or snoozed job becomes claimable again
 */
public record FailResult(Outcome outcome, Optional<OffsetDateTime> retryAt) {

    /**
     * A retry time exactly when a retry was scheduled.
     *
     * @param outcome what happened; not null
     * @param retryAt when the job may run again: present exactly for RETRY_SCHEDULED and SNOOZED
     * @throws IllegalArgumentException when retryAt and the outcome disagree
     */
    public FailResult {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(retryAt, "retryAt");
        if (retryAt.isPresent() != (outcome == Outcome.RETRY_SCHEDULED || outcome == Outcome.SNOOZED)) {
            throw new IllegalArgumentException(
                    "retryAt must be present exactly when the outcome is RETRY_SCHEDULED or SNOOZED; " + outcome
                            + " with retryAt " + retryAt);
        }
    }

    /** The outcomes. */
    public enum Outcome {
        /** Back to {@code pending}, claimable again at {@link FailResult#retryAt()}. */
        RETRY_SCHEDULED,
        /** {@code max_attempts} reached, or the handler failed it permanently: now {@code failed}. */
        FAILED,
        /** The caller no longer holds the lease (expired and rescued, cancelled, deleted); nothing changed. */
        LEASE_LOST,
        /**
         * The handler snoozed the job ({@link JobControl#snooze}): {@code pending} again at
         * {@link FailResult#retryAt()}, the attempt not counted.
         */
        SNOOZED,
        /** The handler cancelled the job ({@link JobControl#cancel}): now {@code cancelled}. */
        CANCELLED
    }
}

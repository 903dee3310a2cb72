package dev.locksmith.jobs;

import dev.locksmith.jobs.engine.JobRow;
import java.util.UUID;

/**
 * Forges jobs for the tests that prove a forged job is refused: a {@link Job} is a value only the
 * queue makes, so this reaches its package-private constructor from the test sources, in its
 * package. Not API.
 */
public final class ForgedJobs {

    private ForgedJobs() {}

    /** {@code job} as it is, but claiming the lease {@code leaseId}. */
    public static Job withLease(Job job, UUID leaseId) {
        return new Job(new JobRow(
                job.id(),
                job.queue(),
                job.shard(),
                job.kind(),
                job.payload(),
                job.priority(),
                job.runAt(),
                job.status(),
                job.attempts(),
                job.maxAttempts(),
                job.lockedBy(),
                job.lockedUntil(),
                job.uniqueKey(),
                job.lastError(),
                job.createdAt(),
                leaseId,
                job.traceparent(),
                job.orderingKey(),
                job.fence(),
                job.row().slot(),
                job.row().concurrencyKey()));
    }
}

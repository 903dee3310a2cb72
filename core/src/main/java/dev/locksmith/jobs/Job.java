package dev.locksmith.jobs;

import dev.locksmith.codegen.tables.records.JobsRecord;
import java.time.OffsetDateTime;
import java.util.Optional;
import java.util.UUID;

/**
 * A job as read or claimed. A job returned by a leased claim carries its lease token,
 * {@code leaseId}: a random UUID written to the row by that claim and by no other. Pass the job
 * back to {@link JobQueue#complete}, {@link JobQueue#fail}, {@link JobQueue#heartbeat} or
 * {@link JobQueue#release}, which apply only while the row is running with that very lease id:
 * a job from another claim (an earlier lease that lapsed and was claimed again, the same id in
 * another database, a claim after a release) is never mistaken for it, and a job cannot be
 * forged into a lease without knowing the lease id.
 *
 * @param id job id
 * @param queue queue name
 * @param shard shard number (0 unless the producer chose one)
 * @param kind what kind of work, for the handler to dispatch on
 * @param payload the JSON payload as text
 * @param priority 0 (first) to 1000 (last)
 * @param runAt earliest time it may be claimed (database clock)
 * @param status its status when read
 * @param attempts claims so far in leased mode, counting the current one
 * @param maxAttempts attempts allowed before it fails permanently
 * @param lockedBy the worker holding the lease, if running
 * @param lockedUntil when the lease expires, if running
 * @param uniqueKey the producer's de-duplication key, if any
 * @param lastError the last failure message, if any
 * @param createdAt when it was enqueued
 * @param leaseId the lease token of a leased claim; null when the job is not running under a lease
 */
public record Job(long id, String queue, int shard, String kind, String payload, int priority, OffsetDateTime runAt,
        JobStatus status, int attempts, int maxAttempts, String lockedBy, OffsetDateTime lockedUntil,
        String uniqueKey, String lastError, OffsetDateTime createdAt, UUID leaseId) {

    /** The lease holder, when the job is running. */
    public Optional<String> lease() {
        return Optional.ofNullable(lockedBy);
    }

    static Job from(JobsRecord r) {
        return new Job(r.getId(), r.getQueue(), r.getShard(), r.getKind(),
                r.getPayload() == null ? null : r.getPayload().data(), r.getPriority(), r.getRunAt(),
                JobStatus.fromDb(r.getStatus()), r.getAttempts(), r.getMaxAttempts(), r.getLockedBy(),
                r.getLockedUntil(), r.getUniqueKey(), r.getLastError(), r.getCreatedAt(), r.getLeaseId());
    }
}

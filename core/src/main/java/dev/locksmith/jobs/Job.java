package dev.locksmith.jobs;

import dev.locksmith.codegen.tables.records.JobsRecord;
import java.time.OffsetDateTime;
import java.util.Optional;

/**
 * A job as read or claimed. A job returned by a leased claim is also the lease token: pass it
 * back to {@link JobQueue#complete}, {@link JobQueue#fail} or {@link JobQueue#heartbeat}, which
 * apply only while {@code lockedBy} and {@code attempts} still match the row.
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
 */
public record Job(long id, String queue, int shard, String kind, String payload, int priority, OffsetDateTime runAt,
        JobStatus status, int attempts, int maxAttempts, String lockedBy, OffsetDateTime lockedUntil,
        String uniqueKey, String lastError, OffsetDateTime createdAt) {

    /** The lease holder, when the job is running. */
    public Optional<String> lease() {
        return Optional.ofNullable(lockedBy);
    }

    static Job from(JobsRecord r) {
        return new Job(r.getId(), r.getQueue(), r.getShard(), r.getKind(),
                r.getPayload() == null ? null : r.getPayload().data(), r.getPriority(), r.getRunAt(),
                JobStatus.fromDb(r.getStatus()), r.getAttempts(), r.getMaxAttempts(), r.getLockedBy(),
                r.getLockedUntil(), r.getUniqueKey(), r.getLastError(), r.getCreatedAt());
    }
}

package dev.locksmith.jobs;

import dev.locksmith.codegen.tables.records.JobsRecord;
import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A job as read or claimed. A job returned by a leased claim carries its lease token,
 * {@code leaseId}: a random UUID written to the row by that claim and by no other. Pass the job
 * back to {@link JobQueue#complete}, {@link JobQueue#fail}, {@link JobQueue#heartbeat} or
 * {@link JobQueue#release}, which apply only while the row is running with that very lease id:
 * a job from another claim (an earlier lease that lapsed and was claimed again, the same id in
 * another database, a claim after a release) is never mistaken for it, and a job cannot be
 * forged into a lease without knowing the lease id.
 *
 * <p>Jobs come from the queue; constructing one is meant for unit tests of handlers. A job
 * constructed with someone else's job id and a made-up lease id is refused by every lease
 * operation (the lease id is checked in the database, in the same statement).
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
 * @param lockedBy the worker holding the lease, if running; null otherwise
 * @param lockedUntil when the lease expires, if running; null otherwise
 * @param uniqueKey the producer's de-duplication key; null if none
 * @param lastError the last failure message; null if it never failed
 * @param createdAt when it was enqueued
 * @param leaseId the lease token of a leased claim; null when the job is not running under a lease
 * @param traceparent the W3C trace context current when the job was enqueued (stored when a
 *     {@link dev.locksmith.observe.LocksmithObserver} supplied one); null otherwise
 * @param orderingKey the key whose jobs run one at a time, in enqueue order
 *     ({@link NewJob.Builder#orderingKey(String)}); null for a job without one
 */
public record Job(
        long id,
        String queue,
        int shard,
        String kind,
        String payload,
        int priority,
        OffsetDateTime runAt,
        JobStatus status,
        int attempts,
        int maxAttempts,
        @Nullable String lockedBy,
        @Nullable OffsetDateTime lockedUntil,
        @Nullable String uniqueKey,
        @Nullable String lastError,
        OffsetDateTime createdAt,
        @Nullable UUID leaseId,
        @Nullable String traceparent,
        @Nullable String orderingKey) {

    /**
     * Checks what the table's constraints guarantee of every job read from it.
     *
     * @param id job id
     * @param queue queue name; not null
     * @param shard shard number
     * @param kind what kind of work; not null
     * @param payload the JSON payload as text
     * @param priority {@link NewJob#MIN_PRIORITY} to {@link NewJob#MAX_PRIORITY}
     * @param runAt earliest time it may be claimed
     * @param status its status; not null
     * @param attempts zero or more
     * @param maxAttempts at least 1
     * @param lockedBy the lease holder, or null
     * @param lockedUntil the lease's expiry, or null
     * @param uniqueKey the de-duplication key, or null
     * @param lastError the last failure message, or null
     * @param createdAt when it was enqueued
     * @param leaseId the lease token, or null; a made-up one is refused by every lease operation
     * @param traceparent the enqueuing trace context, or null
     * @param orderingKey the ordering key, or null
     * @throws IllegalArgumentException for attempts, max attempts or priority out of range
     * @throws NullPointerException when queue, kind or status is null
     */
    public Job {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(status, "status");
        if (attempts < 0) {
            throw new IllegalArgumentException("attempts must not be negative, was " + attempts);
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
        }
        if (priority < NewJob.MIN_PRIORITY || priority > NewJob.MAX_PRIORITY) {
            throw new IllegalArgumentException("priority must be between " + NewJob.MIN_PRIORITY + " and "
                    + NewJob.MAX_PRIORITY + ", was " + priority);
        }
    }

    /**
     * A job without an ordering key, as jobs were before {@code ordering_key} was added.
     *
     * @param id job id
     * @param queue queue name; not null
     * @param shard shard number
     * @param kind what kind of work; not null
     * @param payload the JSON payload as text
     * @param priority {@link NewJob#MIN_PRIORITY} to {@link NewJob#MAX_PRIORITY}
     * @param runAt earliest time it may be claimed
     * @param status its status; not null
     * @param attempts zero or more
     * @param maxAttempts at least 1
     * @param lockedBy the lease holder, or null
     * @param lockedUntil the lease's expiry, or null
     * @param uniqueKey the de-duplication key, or null
     * @param lastError the last failure message, or null
     * @param createdAt when it was enqueued
     * @param leaseId the lease token, or null
     * @param traceparent the enqueuing trace context, or null
     * @throws IllegalArgumentException for attempts, max attempts or priority out of range
     * @throws NullPointerException when queue, kind or status is null
     */
    public Job(
            long id,
            String queue,
            int shard,
            String kind,
            String payload,
            int priority,
            OffsetDateTime runAt,
            JobStatus status,
            int attempts,
            int maxAttempts,
            @Nullable String lockedBy,
            @Nullable OffsetDateTime lockedUntil,
            @Nullable String uniqueKey,
            @Nullable String lastError,
            OffsetDateTime createdAt,
            @Nullable UUID leaseId,
            @Nullable String traceparent) {
        this(
                id,
                queue,
                shard,
                kind,
                payload,
                priority,
                runAt,
                status,
                attempts,
                maxAttempts,
                lockedBy,
                lockedUntil,
                uniqueKey,
                lastError,
                createdAt,
                leaseId,
                traceparent,
                null);
    }

    /**
     * A job without a trace context, as jobs were before {@code traceparent} was added.
     *
     * @param id job id
     * @param queue queue name; not null
     * @param shard shard number
     * @param kind what kind of work; not null
     * @param payload the JSON payload as text
     * @param priority {@link NewJob#MIN_PRIORITY} to {@link NewJob#MAX_PRIORITY}
     * @param runAt earliest time it may be claimed
     * @param status its status; not null
     * @param attempts zero or more
     * @param maxAttempts at least 1
     * @param lockedBy the lease holder, or null
     * @param lockedUntil the lease's expiry, or null
     * @param uniqueKey the de-duplication key, or null
     * @param lastError the last failure message, or null
     * @param createdAt when it was enqueued
     * @param leaseId the lease token, or null
     * @throws IllegalArgumentException for attempts, max attempts or priority out of range
     * @throws NullPointerException when queue, kind or status is null
     */
    public Job(
            long id,
            String queue,
            int shard,
            String kind,
            String payload,
            int priority,
            OffsetDateTime runAt,
            JobStatus status,
            int attempts,
            int maxAttempts,
            @Nullable String lockedBy,
            @Nullable OffsetDateTime lockedUntil,
            @Nullable String uniqueKey,
            @Nullable String lastError,
            OffsetDateTime createdAt,
            @Nullable UUID leaseId) {
        this(
                id,
                queue,
                shard,
                kind,
                payload,
                priority,
                runAt,
                status,
                attempts,
                maxAttempts,
                lockedBy,
                lockedUntil,
                uniqueKey,
                lastError,
                createdAt,
                leaseId,
                null,
                null);
    }

    /**
     * The lease holder, when the job is running.
     *
     * @return the worker that holds it
     */
    public Optional<String> lease() {
        return Optional.ofNullable(lockedBy);
    }

    @SuppressWarnings("NullAway") // jobs.payload is NOT NULL: the null branch only guards a broken row
    static Job from(JobsRecord r) {
        return new Job(
                r.getId(),
                r.getQueue(),
                r.getShard(),
                r.getKind(),
                r.getPayload() == null ? null : r.getPayload().data(),
                r.getPriority(),
                r.getRunAt(),
                JobStatus.fromDb(r.getStatus()),
                r.getAttempts(),
                r.getMaxAttempts(),
                r.getLockedBy(),
                r.getLockedUntil(),
                r.getUniqueKey(),
                r.getLastError(),
                r.getCreatedAt(),
                r.getLeaseId(),
                r.getTraceparent(),
                r.getOrderingKey());
    }
}

package dev.locksmith.jobs;

import dev.locksmith.jobs.engine.JobRow;
import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A job as the queue read or claimed it: a value the library produces, never one you construct.
 * A job returned by a leased claim carries its lease token, {@link #leaseId()}: a random UUID
 * written to the row by that claim and by no other. Pass the job back to
 * {@link JobQueue#complete}, {@link JobQueue#fail}, {@link JobQueue#heartbeat} or
 * {@link JobQueue#release}, which apply only while the row is running with that very lease id: a
 * job from another claim (an earlier lease that lapsed and was claimed again, the same id in
 * another database, a claim after a release) is never mistaken for it.
 *
 * <p>To test a handler, give it a job from a claim: enqueue one and claim it
 * ({@link JobQueue#claim(Claim, java.time.Duration, String)} or
 * {@link JobQueue#claimInTransaction(org.jooq.DSLContext, Claim)}).
 *
 * <p>Equal when every field is equal, as a record would be.
 */
public final class Job {

    private final JobRow row;

    /** Only the queue makes jobs, from the columns it read. */
    Job(JobRow row) {
        this.row = Objects.requireNonNull(row, "row");
    }

    /** The columns the job was made of, for the queue's engine. */
    JobRow row() {
        return row;
    }

    /** {@return the job's id} */
    public long id() {
        return row.id();
    }

    /** {@return the queue's name} */
    public String queue() {
        return row.queue();
    }

    /** {@return the shard number: 0 unless the producer chose one, or Citus placed the job} */
    public int shard() {
        return row.shard();
    }

    /** {@return what kind of work: what a handler dispatches on} */
    public String kind() {
        return row.kind();
    }

    /** {@return the JSON payload as text} */
    public String payload() {
        return row.payload();
    }

    /** {@return the priority, {@link NewJob#MIN_PRIORITY} (claimed first) to {@link NewJob#MAX_PRIORITY}} */
    public int priority() {
        return row.priority();
    }

    /** {@return the earliest time it may be claimed (database clock)} */
    public OffsetDateTime runAt() {
        return row.runAt();
    }

    /** {@return its status when read (a claimed job: {@code running} when leased, else {@code pending})} */
    public JobStatus status() {
        return row.status();
    }

    /**
     * The attempts counted so far. For a job in hand (from a claim, in every worker mode) the
     * attempt now running is counted: 1 on its first run, {@link #maxAttempts()} on its last.
     * For a job read with {@link JobQueue#find}, the attempts started so far.
     *
     * @return the attempts, zero or more
     */
    public int attempts() {
        return row.attempts();
    }

    /** {@return the attempts allowed before it fails for good, at least 1} */
    public int maxAttempts() {
        return row.maxAttempts();
    }

    /** {@return the worker holding the lease while it is running; null otherwise} */
    public @Nullable String lockedBy() {
        return row.lockedBy();
    }

    /** {@return when the lease expires while it is running; null otherwise} */
    public @Nullable OffsetDateTime lockedUntil() {
        return row.lockedUntil();
    }

    /** {@return the producer's de-duplication key; null if none} */
    public @Nullable String uniqueKey() {
        return row.uniqueKey();
    }

    /** {@return the last failure's message; null if it never failed} */
    public @Nullable String lastError() {
        return row.lastError();
    }

    /** {@return when it was enqueued} */
    public OffsetDateTime createdAt() {
        return row.createdAt();
    }

    /** {@return the lease token of a leased claim; null when the job is not running under a lease} */
    public @Nullable UUID leaseId() {
        return row.leaseId();
    }

    /**
     * The job's fencing token: how many leases it has had. Every leased claim
     * ({@link JobWorker}, {@link JobQueue#claim(Claim, java.time.Duration, String)}) and every
     * {@link TwoPhaseWorker} claim adds one, so a job in hand holds a number larger than any
     * earlier holder of the same job held. Write it beside what the handler changes outside the
     * job and refuse a smaller one ({@link dev.locksmith.Fencing}): a holder whose lease lapsed
     * (a long GC pause, a partition) and whose job was claimed again then cannot overwrite the
     * newer holder's work. A transactional claim ({@link TransactionalWorker},
     * {@link JobQueue#claimInTransaction}) holds the row lock instead of a lease: its job carries
     * one more than the last lease's number, which is not written to the row (what its handler
     * writes in the database commits with the claim or not at all; after a rollback the next claim
     * is handed the same number). The numbers order the holders of this one job only: fence what
     * only this job writes.
     *
     * @return the fencing token: 1 or more for a job in hand, 0 for a job read that was never
     *     leased
     */
    public long fence() {
        return row.fence();
    }

    /**
     * The W3C trace context current when the job was enqueued, stored when a
     * {@link dev.locksmith.observe.LocksmithObserver} supplied one.
     *
     * @return the {@code traceparent}, or null
     */
    public @Nullable String traceparent() {
        return row.traceparent();
    }

    /**
     * The key whose jobs run one at a time, in enqueue order ({@link NewJob.Builder#orderingKey(String)}).
     *
     * @return the ordering key, or null for a job without one
     */
    public @Nullable String orderingKey() {
        return row.orderingKey();
    }

    /**
     * The key whose running jobs a concurrency limit counts ({@link NewJob.Builder#concurrencyKey(String)}).
     *
     * @return the concurrency key, or null for a job without one
     */
    public @Nullable String concurrencyKey() {
        return row.concurrencyKey();
    }

    /**
     * The lease holder, when the job is running.
     *
     * @return the worker that holds it
     */
    public Optional<String> lease() {
        return Optional.ofNullable(row.lockedBy());
    }

    @Override
    public boolean equals(@Nullable Object other) {
        return other instanceof Job job && row.equals(job.row);
    }

    @Override
    public int hashCode() {
        return row.hashCode();
    }

    @Override
    public String toString() {
        return row.toString().replaceFirst("^JobRow", "Job");
    }
}

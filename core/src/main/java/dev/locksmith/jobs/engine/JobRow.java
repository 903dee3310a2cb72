package dev.locksmith.jobs.engine;

import dev.locksmith.codegen.tables.records.JobHistoryRecord;
import dev.locksmith.codegen.tables.records.JobsRecord;
import dev.locksmith.jobs.JobStatus;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.Locale;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The columns of a job as the engine reads them, before they become a {@link dev.locksmith.jobs.Job}
 * (which only the jobs package constructs, from one of these). See {@code Job} for what each
 * means. <b>Internal: not API.</b>
 *
 * @param id job id
 * @param queue queue name
 * @param shard shard number
 * @param kind kind of work
 * @param payload JSON text
 * @param priority 0 (first) to 1000
 * @param runAt earliest claim time
 * @param status status as read
 * @param attempts attempts counted, the current one included for a job in hand
 * @param maxAttempts attempts allowed
 * @param lockedBy lease holder, or null
 * @param lockedUntil lease expiry, or null
 * @param uniqueKey de-duplication key, or null
 * @param lastError last failure, or null
 * @param createdAt enqueue time
 * @param leaseId lease token, or null
 * @param traceparent enqueuing trace context, or null
 * @param orderingKey ordering key, or null
 * @param fence leases the job has had: its fencing token
 * @param slot the partition of {@code jobs} the row was read from ({@link Generations}): a job
 *     that is running stays in it until it ends, so the statements that settle a leased job name
 *     it; 0 for a row of {@code job_history}, which has none
 * @param concurrencyKey concurrency key, or null
 */
public record JobRow(
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
        @Nullable String orderingKey,
        long fence,
        short slot,
        @Nullable String concurrencyKey) {

    /**
     * The row's status read from {@code jobs.status}.
     *
     * @param value the stored value, the constant's name in lower case
     * @return the status
     */
    public static JobStatus status(String value) {
        return JobStatus.valueOf(value.toUpperCase(Locale.ROOT));
    }

    /**
     * A row of {@link JobStatements#JOB_COLUMNS}, by position: every statement that returns jobs
     * lists them in that order, and a claim of hundreds of rows then spends no time looking up
     * names.
     *
     * @param row the result set, positioned on the row
     * @param claimAdded added to the stored attempts and fence: 1 where the row is the job in hand
     *     of a claim that counts neither in the row itself (the transactional claim, which deletes
     *     it), so that its holder has a fence above every earlier holder's
     * @return the columns
     * @throws SQLException when the driver cannot read them
     */
    static JobRow read(ResultSet row, int claimAdded) throws SQLException {
        return new JobRow(
                row.getLong(1),
                row.getString(2),
                row.getInt(3),
                row.getString(4),
                row.getString(5),
                row.getInt(6),
                row.getObject(7, OffsetDateTime.class),
                status(row.getString(8)),
                row.getInt(9) + claimAdded,
                row.getInt(10),
                row.getString(11),
                row.getObject(12, OffsetDateTime.class),
                row.getString(13),
                row.getString(14),
                row.getObject(15, OffsetDateTime.class),
                row.getObject(16, UUID.class),
                row.getString(17),
                row.getString(18),
                row.getLong(19) + claimAdded,
                row.getShort(20),
                row.getString(21));
    }

    /**
     * The columns of a record read through jOOQ.
     *
     * @param r the record
     * @return the columns
     */
    @SuppressWarnings("NullAway") // jobs.payload is NOT NULL: the null branch only guards a broken row
    public static JobRow of(JobsRecord r) {
        return new JobRow(
                r.getId(),
                r.getQueue(),
                r.getShard(),
                r.getKind(),
                r.getPayload() == null ? null : r.getPayload().data(),
                r.getPriority(),
                r.getRunAt(),
                status(r.getStatus()),
                r.getAttempts(),
                r.getMaxAttempts(),
                r.getLockedBy(),
                r.getLockedUntil(),
                r.getUniqueKey(),
                r.getLastError(),
                r.getCreatedAt(),
                r.getLeaseId(),
                r.getTraceparent(),
                r.getOrderingKey(),
                r.getFence(),
                r.getSlot(),
                r.getConcurrencyKey());
    }

    /**
     * The columns of a finished job read from {@code job_history}, which keeps no lease.
     *
     * @param r the record
     * @return the columns
     */
    @SuppressWarnings("NullAway") // job_history.payload is NOT NULL: the null branch only guards a broken row
    public static JobRow of(JobHistoryRecord r) {
        return new JobRow(
                r.getId(),
                r.getQueue(),
                r.getShard(),
                r.getKind(),
                r.getPayload() == null ? null : r.getPayload().data(),
                r.getPriority(),
                r.getRunAt(),
                status(r.getStatus()),
                r.getAttempts(),
                r.getMaxAttempts(),
                null,
                null,
                r.getUniqueKey(),
                r.getLastError(),
                r.getCreatedAt(),
                null,
                r.getTraceparent(),
                r.getOrderingKey(),
                r.getFence(),
                (short) 0,
                r.getConcurrencyKey());
    }
}

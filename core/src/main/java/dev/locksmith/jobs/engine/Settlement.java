package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;

import dev.locksmith.codegen.tables.records.JobsRecord;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.Texts;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * How a job's attempt ends other than by completion: a failure (back to {@code pending} after the
 * retry backoff, or {@code failed} once {@code max_attempts} is used) or what its handler asked
 * for with a {@link JobControl} (snooze, retry after a delay, fail for good, cancel). For a
 * leased job, an update of its row under the caller's lease; for a job of a transactional claim,
 * which deleted the row, the row written back in the claiming transaction.
 * <b>Internal: not API.</b>
 */
public final class Settlement {

    /** The most characters of {@code last_error}. */
    static final int MAX_ERROR_LENGTH = 10_000;

    private final QueueContext context;

    Settlement(QueueContext context) {
        this.context = context;
    }

    /**
     * Records a failure of a leased job in the caller's transaction: back to {@code pending} after
     * the retry backoff, or {@code failed} once {@code max_attempts} is reached.
     */
    public FailResult fail(DSLContext tx, Job job, @Nullable String error) {
        return leased(tx, job, JobControl.Action.RETRY, backoff(job), storable(error));
    }

    /** Does with a leased job what its handler's control asks, in the caller's transaction. */
    public FailResult settle(DSLContext tx, Job job, JobControl control) {
        Objects.requireNonNull(control, "control");
        return leased(tx, job, control.action(), control.delay(), storable(control.reason()));
    }

    /**
     * Records a failed attempt of a job claimed in transactional mode, in the transaction that
     * claimed (deleted) it: the row is written back with the attempt counted and
     * {@code last_error}, {@code pending} after the retry backoff, or {@code failed} once
     * {@code max_attempts} is reached. Call it after rolling back to a savepoint taken after the
     * claim, so that the handler's writes are gone but the deletion is not.
     */
    public FailResult requeueFailed(DSLContext tx, Job job, @Nullable String error) {
        return requeue(tx, job, JobControl.Action.RETRY, backoff(job), storable(error));
    }

    /**
     * Writes back a job claimed in transactional mode as its handler's {@link JobControl} asks,
     * under the same conditions as {@link #requeueFailed}: a snooze gives the attempt back, the
     * other actions count it.
     */
    public FailResult requeue(DSLContext tx, Job job, JobControl control) {
        return requeue(tx, job, control.action(), control.delay(), storable(control.reason()));
    }

    private FailResult leased(DSLContext tx, Job job, JobControl.Action action, Duration delay, String message) {
        DSLContext ctx = context.on(tx);
        Condition owned = Leases.owned(job, context.slot(job));
        JobControl.Action effective = lastAttempt(action, job.attempts(), job.maxAttempts());
        return observed(
                job,
                () -> Errors.translating(() -> {
                    if (effective == JobControl.Action.FAIL || effective == JobControl.Action.CANCEL) {
                        // finished for good: the row moves to job_history in this one statement
                        int moved = History.move(
                                        ctx, owned, History.finishing(finalStatus(effective), DSL.val(message)))
                                .execute();
                        return moved == 0
                                ? new FailResult(FailResult.Outcome.LEASE_LOST, Optional.empty())
                                : result(effective, job.runAt());
                    }
                    var update = ctx.update(JOBS)
                            .set(JOBS.UPDATED_AT, Sql.statementTime())
                            .setNull(JOBS.LOCKED_BY)
                            .setNull(JOBS.LOCKED_UNTIL)
                            .setNull(JOBS.LEASE_ID)
                            .set(JOBS.STATUS, Sql.PENDING);
                    var set = effective == JobControl.Action.SNOOZE
                            ? update.set(JOBS.RUN_AT, Sql.after(delay)).set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.minus(1))
                            : update.set(JOBS.RUN_AT, Sql.after(delay)).set(JOBS.LAST_ERROR, message);
                    Optional<JobsRecord> row =
                            set.where(owned).returning(JOBS.RUN_AT).fetchOptional();
                    return row.isEmpty()
                            ? new FailResult(FailResult.Outcome.LEASE_LOST, Optional.empty())
                            : result(effective, row.get().getRunAt());
                }),
                true);
    }

    /** The status of a job that {@code action} finishes for good (fail or cancel). */
    static Field<String> finalStatus(JobControl.Action action) {
        return action == JobControl.Action.CANCEL ? Sql.CANCELLED : Sql.FAILED;
    }

    private FailResult requeue(DSLContext tx, Job job, JobControl.Action action, Duration delay, String message) {
        DSLContext ctx = context.on(tx);
        // The job in hand counts the attempt that ran (Job#attempts); a snooze gives it back.
        int attempts = action == JobControl.Action.SNOOZE ? job.attempts() - 1 : job.attempts();
        JobControl.Action effective = lastAttempt(action, attempts, job.maxAttempts());
        boolean finished = effective == JobControl.Action.FAIL || effective == JobControl.Action.CANCEL;
        Field<String> status = switch (effective) {
            case SNOOZE, RETRY -> Sql.PENDING;
            case FAIL -> Sql.FAILED;
            case CANCEL -> Sql.CANCELLED;
        };
        Field<OffsetDateTime> runAt = finished ? DSL.val(job.runAt()) : Sql.after(delay);
        String lastError = effective == JobControl.Action.SNOOZE ? job.lastError() : message;
        return observed(
                job,
                () -> Errors.translating(() -> {
                    if (finished) {
                        // finished for good: written straight to job_history (the claim deleted the row)
                        History.insert(ctx, List.of(job), status, message);
                        return result(effective, job.runAt());
                    }
                    JobsRecord row = ctx.insertInto(JOBS)
                            .set(JOBS.ID, job.id())
                            .set(JOBS.QUEUE, job.queue())
                            .set(JOBS.SHARD, job.shard())
                            .set(JOBS.KIND, job.kind())
                            .set(JOBS.PAYLOAD, org.jooq.JSONB.valueOf(job.payload()))
                            .set(JOBS.PRIORITY, (short) job.priority())
                            .set(JOBS.RUN_AT, runAt)
                            .set(JOBS.STATUS, status)
                            .set(JOBS.ATTEMPTS, attempts)
                            .set(JOBS.MAX_ATTEMPTS, job.maxAttempts())
                            .set(JOBS.UNIQUE_KEY, job.uniqueKey())
                            .set(JOBS.TRACEPARENT, job.traceparent())
                            .set(JOBS.ORDERING_KEY, job.orderingKey())
                            .set(JOBS.CONCURRENCY_KEY, job.concurrencyKey())
                            .set(JOBS.LAST_ERROR, lastError)
                            .set(JOBS.CREATED_AT, job.createdAt())
                            .returning(JOBS.RUN_AT)
                            .fetchSingle();
                    return result(effective, row.getRunAt());
                }),
                true);
    }

    /** A retry after the last attempt is a failure for good. */
    private static JobControl.Action lastAttempt(JobControl.Action action, int attempts, int maxAttempts) {
        return action == JobControl.Action.RETRY && attempts >= maxAttempts ? JobControl.Action.FAIL : action;
    }

    /** The retry backoff after the attempt of {@code job} in hand failed. */
    Duration backoff(Job job) {
        return context.config
                .retryBackoff()
                .delay(Math.max(1, job.attempts()), ThreadLocalRandom.current().nextDouble());
    }

    /** {@code text} as {@code last_error} keeps it. */
    static String storable(@Nullable String text) {
        return Texts.storable(text, MAX_ERROR_LENGTH);
    }

    /** The result of settling a job with {@code action}; {@code runAt} is the row's as written. */
    static FailResult result(JobControl.Action action, OffsetDateTime runAt) {
        return switch (action) {
            case SNOOZE -> new FailResult(FailResult.Outcome.SNOOZED, Optional.of(runAt));
            case RETRY -> new FailResult(FailResult.Outcome.RETRY_SCHEDULED, Optional.of(runAt));
            case FAIL -> new FailResult(FailResult.Outcome.FAILED, Optional.empty());
            case CANCEL -> new FailResult(FailResult.Outcome.CANCELLED, Optional.empty());
        };
    }

    /**
     * Runs the recording of an attempt's end as an observed {@link Operation.FailJob}; a
     * {@link FailResult.Outcome#LEASE_LOST} result is reported as a {@link JobEvent} only when
     * {@code reportLost} (a two-phase job has no lease to lose).
     */
    FailResult observed(Job job, Supplier<FailResult> statement, boolean reportLost) {
        if (!context.observing.enabled()) {
            return statement.get();
        }
        FailResult result =
                context.observing.observe(() -> new Operation.FailJob(job), statement, r -> switch (r.outcome()) {
                    case RETRY_SCHEDULED -> Outcome.RETRY_SCHEDULED;
                    case FAILED -> Outcome.FAILED;
                    case LEASE_LOST -> Outcome.LEASE_LOST;
                    case SNOOZED -> Outcome.SNOOZED;
                    case CANCELLED -> Outcome.CANCELLED;
                });
        if (result.outcome() != FailResult.Outcome.LEASE_LOST || reportLost) {
            context.observing.jobEvent(
                    switch (result.outcome()) {
                        case RETRY_SCHEDULED -> JobEvent.RETRY_SCHEDULED;
                        case FAILED -> JobEvent.FAILED;
                        case LEASE_LOST -> JobEvent.LEASE_LOST;
                        case SNOOZED -> JobEvent.SNOOZED;
                        case CANCELLED -> JobEvent.CANCELLED;
                    },
                    job);
        }
        return result;
    }
}

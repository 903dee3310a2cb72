package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;

import dev.locksmith.codegen.tables.records.JobHistoryRecord;
import dev.locksmith.codegen.tables.records.JobsRecord;
import dev.locksmith.internal.Errors;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jooq.CommonTableExpression;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.SelectField;
import org.jooq.TableField;
import org.jooq.impl.DSL;

/**
 * An operator's changes to one job, each in the caller's transaction: cancel it, put a failed or
 * cancelled job back, delete a finished one. <b>Internal: not API.</b>
 */
public final class JobAdmin {

    private final QueueContext context;
    private final WakeUps wakeUps;

    JobAdmin(QueueContext context, WakeUps wakeUps) {
        this.context = context;
        this.wakeUps = wakeUps;
    }

    /**
     * Cancels a pending or running job.
     *
     * @return false when the job is already finished or does not exist
     */
    public boolean cancel(DSLContext tx, long id) {
        DSLContext ctx = context.on(tx);
        Condition live = JOBS.ID.eq(id).and(JOBS.STATUS.in(Sql.LIVE));
        // looking again: a pending job may move to the current generation while this waits for it
        return Errors.translating(() -> Generations.lookingAgain(
                        ctx,
                        live,
                        () -> History.move(ctx, live, History.finishing(Sql.CANCELLED))
                                .execute(),
                        cancelled -> cancelled == 1))
                == 1;
    }

    /**
     * Puts a {@code failed} or {@code cancelled} job back: {@code pending}, due at once, with one
     * more attempt when it had used them all; workers woken as the queue's settings say.
     *
     * @return false when the job does not exist or is not failed or cancelled
     */
    public boolean retry(DSLContext tx, long id) {
        DSLContext ctx = context.on(tx);
        Optional<String> queue = Errors.translating(() -> fromHistory(ctx, id)
                .or(() -> ctx.update(JOBS)
                        .set(JOBS.STATUS, Sql.PENDING)
                        .set(JOBS.RUN_AT, Sql.statementTime())
                        .set(JOBS.MAX_ATTEMPTS, DSL.greatest(JOBS.MAX_ATTEMPTS, JOBS.ATTEMPTS.plus(1)))
                        .setNull(JOBS.FINISHED_AT)
                        .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(JOBS.ID.eq(id).and(JOBS.STATUS.in(Sql.FAILED, Sql.CANCELLED)))
                        .returning(JOBS.QUEUE)
                        .fetchOptional()
                        .map(JobsRecord::getQueue)));
        if (queue.isEmpty()) {
            return false;
        }
        Set<String> queues = Set.of(queue.get());
        boolean autoCommit = Errors.translating(() -> ctx.connectionResult(java.sql.Connection::getAutoCommit));
        // Auto-committed, the row is back before any NOTIFY: carrying would be one more statement here.
        WakeUps.Plan plan = wakeUps.plan(ctx, autoCommit, queues, !autoCommit);
        if (plan.notifies()) {
            try {
                Errors.translating(() -> ctx.select(
                                DSL.function("pg_notify", Object.class, DSL.val(Sql.CHANNEL), DSL.val(queue.get())))
                        .fetch());
            } catch (RuntimeException | Error e) {
                wakeUps.failed(plan);
                throw e;
            }
        }
        wakeUps.returned(plan, queues);
        return true;
    }

    /**
     * Deletes one finished job; a live one is left alone.
     *
     * @return false when the job does not exist or is still pending or running
     */
    public boolean deleteFinished(DSLContext tx, long id) {
        DSLContext ctx = context.on(tx);
        return Errors.translating(() ->
                        ctx.deleteFrom(JOB_HISTORY).where(JOB_HISTORY.ID.eq(id)).execute()
                                + ctx.deleteFrom(JOBS)
                                        .where(JOBS.ID.eq(id).and(JOBS.STATUS.in(Sql.FINISHED)))
                                        .execute())
                >= 1;
    }

    /**
     * Moves a failed or cancelled job from {@code job_history} back into {@code jobs}, pending and
     * due now, in one statement ({@code WITH back AS (DELETE FROM job_history ... RETURNING ...)
     * INSERT INTO jobs ...}): a concurrent retry or deletion of the same job waits for the row and
     * then finds it gone, so the job is put back once. Empty when history has no such job (the
     * caller then looks in {@code jobs}, where a library before the history table left finished
     * rows).
     */
    private static Optional<String> fromHistory(DSLContext ctx, long id) {
        List<SelectField<?>> returned = new ArrayList<>();
        for (TableField<JobHistoryRecord, ?> column : History.KEPT) {
            if (column == JOB_HISTORY.STATUS) {
                returned.add(Sql.PENDING.as(column.getUnqualifiedName()));
            } else if (column == JOB_HISTORY.MAX_ATTEMPTS) {
                returned.add(DSL.greatest(JOB_HISTORY.MAX_ATTEMPTS, JOB_HISTORY.ATTEMPTS.plus(1))
                        .as(column.getUnqualifiedName()));
            } else if (column == JOB_HISTORY.FINISHED_AT) {
                returned.add(DSL.castNull(JOB_HISTORY.FINISHED_AT).as(column.getUnqualifiedName()));
            } else {
                returned.add(column);
            }
        }
        CommonTableExpression<Record> back = DSL.name("back")
                .as(DSL.deleteFrom(JOB_HISTORY)
                        .where(JOB_HISTORY.ID.eq(id))
                        .and(JOB_HISTORY.STATUS.in(Sql.FAILED, Sql.CANCELLED))
                        .returningResult(returned));
        // The times are the insert's, not the delete's RETURNING: Citus refuses functions that are
        // not immutable there.
        List<SelectField<?>> inserted = new ArrayList<>();
        for (TableField<JobHistoryRecord, ?> column : History.KEPT) {
            if (column == JOB_HISTORY.RUN_AT) {
                inserted.add(Sql.statementTime());
            } else if (column == JOB_HISTORY.UPDATED_AT) {
                inserted.add(DSL.currentOffsetDateTime());
            } else {
                inserted.add(back.field(column.getUnqualifiedName()));
            }
        }
        return ctx.with(back)
                .insertInto(JOBS)
                .columns(History.FROM_JOBS)
                .select(DSL.select(inserted).from(back))
                .returning(JOBS.QUEUE)
                .fetchOptional()
                .map(JobsRecord::getQueue);
    }
}

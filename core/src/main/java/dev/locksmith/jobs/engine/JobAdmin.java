package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;

import dev.locksmith.codegen.tables.records.JobsRecord;
import dev.locksmith.internal.Errors;
import java.util.Optional;
import java.util.Set;
import org.jooq.DSLContext;
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
        return Errors.translating(() -> ctx.update(JOBS)
                        .set(JOBS.STATUS, Sql.CANCELLED)
                        .set(JOBS.FINISHED_AT, DSL.currentOffsetDateTime())
                        .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .setNull(JOBS.LOCKED_BY)
                        .setNull(JOBS.LOCKED_UNTIL)
                        .setNull(JOBS.LEASE_ID)
                        .where(JOBS.ID.eq(id).and(JOBS.STATUS.in(Sql.LIVE)))
                        .execute())
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
        Optional<String> queue = Errors.translating(() -> ctx.update(JOBS)
                .set(JOBS.STATUS, Sql.PENDING)
                .set(JOBS.RUN_AT, Sql.statementTime())
                .set(JOBS.MAX_ATTEMPTS, DSL.greatest(JOBS.MAX_ATTEMPTS, JOBS.ATTEMPTS.plus(1)))
                .setNull(JOBS.FINISHED_AT)
                .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                .where(JOBS.ID.eq(id).and(JOBS.STATUS.in(Sql.FAILED, Sql.CANCELLED)))
                .returning(JOBS.QUEUE)
                .fetchOptional()
                .map(JobsRecord::getQueue));
        if (queue.isEmpty()) {
            return false;
        }
        Set<String> queues = Set.of(queue.get());
        boolean autoCommit = Errors.translating(() -> ctx.connectionResult(java.sql.Connection::getAutoCommit));
        WakeUps.Plan plan = wakeUps.plan(autoCommit, queues);
        if (plan == WakeUps.Plan.IN_STATEMENT) {
            Errors.translating(() -> ctx.select(
                            DSL.function("pg_notify", Object.class, DSL.val(Sql.CHANNEL), DSL.val(queue.get())))
                    .fetch());
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
        return Errors.translating(() -> ctx.deleteFrom(JOBS)
                        .where(JOBS.ID.eq(id).and(JOBS.STATUS.in(Sql.FINISHED)))
                        .execute())
                == 1;
    }
}

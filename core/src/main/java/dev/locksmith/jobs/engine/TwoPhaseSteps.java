package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;

import dev.locksmith.LockWait;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.internal.Errors;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Record1;
import org.jooq.Select;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;

/**
 * The steps of a two-phase job after its claim ({@link Claims#twoPhase}): taking it in the
 * transaction to be prepared, and recording how an attempt ended when that transaction rolled
 * back. Each finds the job only while it is as its claim left it (pending, with the attempts the
 * claim counted), so a step of a worker whose hold ran out cannot touch the job another claimer
 * took since. <b>Internal: not API.</b>
 */
public final class TwoPhaseSteps {

    /**
     * How long the steps of a two-phase job wait for its row: only another claimer, after the
     * claim's hold ran out, holds it longer than a moment.
     */
    private static final LockWait LOCK_WAIT = LockWait.upTo(Duration.ofSeconds(10));

    private final QueueContext context;
    private final Settlement settlement;

    TwoPhaseSteps(QueueContext context, Settlement settlement) {
        this.context = context;
        this.settlement = settlement;
    }

    /** What {@link #take} came to. */
    public enum Take {
        /** The job is deleted in the transaction: run it, then prepare. */
        TAKEN,
        /** The hold ran out and another claimer has the job: leave it to that claimer. */
        GONE,
        /**
         * The job is still as its keyed claim left it, but this transaction may not run it: the
         * hold ran out before the take (another claim may have its slot since), or the slot's
         * lock stayed held by another claim's transaction through the lock wait. Roll back and
         * give the job back ({@link #release}): it did not run.
         */
        GIVEN_UP
    }

    /**
     * The second step, in the transaction to be prepared: deletes the job claimed by
     * {@link Claims#twoPhase} (moves it to {@code job_history} as {@code done} with
     * {@code keepCompleted}), if it is still as that claim left it, waiting for its row at most
     * ten seconds. A job a keyed claim held in a slot of its key (a queue with limits) is taken
     * only with the slot's lock ({@link #lockSlot}) and while its hold lasts, read after that lock
     * was granted: once the hold has run out the function's looks no longer count the job, and
     * another claim may have taken its slot (and released the lock when it committed).
     *
     * @return what it came to; the transaction is to be rolled back unless {@link Take#TAKEN}
     */
    public Take take(DSLContext tx, Job job) {
        DSLContext ctx = context.on(tx);
        boolean keyed = job.concurrencyKey() != null && context.keyed.limited(ctx, job.queue());
        // for a job in a slot, the statement after the slot's lock: the hold still lasts
        Condition takeable = keyed
                ? asClaimed(job).and(JOBS.KEY_SLOT.isNull().or(JOBS.RUN_AT.gt(Sql.statementTime())))
                : asClaimed(job);
        boolean[] slotHad = {!keyed};
        int taken;
        try {
            taken = LOCK_WAIT.run(ctx, () -> {
                if (keyed) {
                    lockSlot(ctx, job);
                    slotHad[0] = true;
                }
                return Generations.lookingAgain(
                        ctx,
                        takeable,
                        () -> context.config.keepCompleted()
                                ? History.move(ctx, JOBS.ID.in(locked(ctx, takeable)), History.finishing(Sql.DONE))
                                        .execute()
                                : ctx.deleteFrom(JOBS)
                                        .where(JOBS.ID.in(locked(ctx, takeable)))
                                        .execute(),
                        n -> n == 1);
            });
        } catch (LockNotAvailableException stillHeld) {
            return slotHad[0] ? Take.GONE : Take.GIVEN_UP;
        }
        if (taken == 1) {
            return Take.TAKEN;
        }
        return keyed && Errors.translating(() -> ctx.fetchExists(JOBS, asClaimed(job))) ? Take.GIVEN_UP : Take.GONE;
    }

    /**
     * Takes the lock of the slot of its key that a keyed claim gave the job ({@code key_slot},
     * negated while the claim holds it: {@link KeyedClaims#held}), the lock the schema's
     * {@code job_claim_keyed} tries for that slot, so that the transaction to be prepared keeps the
     * slot until it is committed or rolled back, even after the hold has run out while it is in
     * doubt; until then the held row keeps it. A claim that locked the slot before it saw the held
     * row (a snapshot from before the hold committed) holds it until its transaction ends: this
     * waits for it, within the lock wait. Nothing for a job without a slot.
     */
    private static void lockSlot(DSLContext ctx, Job job) {
        ctx.select(DSL.field(
                        "pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext({0} || chr(31) || {1}), -{2})",
                        Object.class, DSL.val(job.queue()), DSL.val(job.concurrencyKey()), JOBS.KEY_SLOT))
                .from(JOBS)
                .where(asClaimed(job))
                .and(JOBS.KEY_SLOT.lt(DSL.inline((short) 0)))
                .fetch();
    }

    /**
     * Records the failure of a two-phase attempt after its transaction rolled back (the attempt
     * was counted by the claim): {@code last_error}, and {@code run_at} after the retry backoff,
     * or {@code failed} when it was the last attempt. The job is not due meanwhile (the claim's
     * hold), so no claimer competes for it.
     *
     * @return {@link FailResult.Outcome#LEASE_LOST} when the job is no longer as the claim left it
     *     (the hold ran out and another claimer took it); nothing changed then
     */
    public FailResult fail(DSLContext autoCommit, Job job, @Nullable String error) {
        return end(autoCommit, job, JobControl.Action.RETRY, settlement.backoff(job), Settlement.storable(error));
    }

    /**
     * Does what the handler's {@link JobControl} asked, after the attempt's transaction rolled back:
     * a snooze gives the attempt back, a retry counts it (failed for good after the last), a
     * permanent failure or a cancellation finishes the job. As {@link #fail}, only while the job
     * is as its claim left it.
     *
     * @return the outcome, or {@link FailResult.Outcome#LEASE_LOST} with nothing changed
     */
    public FailResult settle(DSLContext autoCommit, Job job, JobControl control) {
        return end(autoCommit, job, control.action(), control.delay(), Settlement.storable(control.reason()));
    }

    private FailResult end(DSLContext autoCommit, Job job, JobControl.Action action, Duration delay, String message) {
        DSLContext ctx = context.on(autoCommit);
        JobControl.Action effective = action == JobControl.Action.RETRY && job.attempts() >= job.maxAttempts()
                ? JobControl.Action.FAIL
                : action;
        return settlement.observed(
                job,
                () -> onHeldJob(
                                ctx,
                                c -> Generations.lookingAgain(
                                        c,
                                        asClaimed(job),
                                        () -> endOnce(c, job, effective, delay, message),
                                        Optional::isPresent),
                                Optional.<FailResult>empty())
                        .orElseGet(() -> new FailResult(FailResult.Outcome.LEASE_LOST, Optional.empty())),
                false);
    }

    /** One look of {@link #end}: the held job finished or rescheduled as {@code effective} says; empty if not found. */
    private static Optional<FailResult> endOnce(
            DSLContext c, Job job, JobControl.Action effective, Duration delay, String message) {
        if (effective == JobControl.Action.FAIL || effective == JobControl.Action.CANCEL) {
            // finished for good: the row moves to job_history
            int moved = History.move(
                            c,
                            JOBS.ID.in(heldAsClaimed(c, job)),
                            History.finishing(Settlement.finalStatus(effective), DSL.val(message)))
                    .execute();
            return moved == 0 ? Optional.empty() : Optional.of(Settlement.result(effective, job.runAt()));
        }
        // the slot a keyed claim held goes with the hold: the job waits for its next claim
        var update = c.update(JOBS)
                .set(JOBS.UPDATED_AT, Sql.statementTime())
                .set(JOBS.KEY_SLOT, DSL.castNull(SQLDataType.SMALLINT));
        var set = effective == JobControl.Action.SNOOZE
                ? update.set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.minus(1)).set(JOBS.RUN_AT, Sql.after(delay))
                : update.set(JOBS.RUN_AT, Sql.after(delay)).set(JOBS.LAST_ERROR, message);
        return set.where(JOBS.ID.in(heldAsClaimed(c, job)))
                .returning(JOBS.RUN_AT)
                .fetchOptional()
                .map(row -> Settlement.result(effective, row.getRunAt()));
    }

    /**
     * Gives a two-phase job back without counting its attempt (PREPARE found no free slot: the
     * server's capacity, not the job's failure), due after {@code delay}.
     */
    public void release(DSLContext autoCommit, Job job, Duration delay) {
        DSLContext ctx = context.on(autoCommit);
        onHeldJob(
                ctx,
                c -> Generations.lookingAgain(
                        c,
                        asClaimed(job),
                        () -> c.update(JOBS)
                                .set(JOBS.KEY_SLOT, DSL.castNull(SQLDataType.SMALLINT))
                                .set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.minus(1))
                                .set(JOBS.RUN_AT, Sql.after(delay))
                                .set(JOBS.UPDATED_AT, Sql.statementTime())
                                .where(JOBS.ID.in(heldAsClaimed(c, job)))
                                .execute(),
                        released -> released == 1),
                0);
    }

    /**
     * Fails a job that a two-phase claim found past its last attempt: the worker of that attempt
     * died before it could record the outcome (before PREPARE, or its resolver's record was lost).
     */
    public FailResult failExhausted(DSLContext autoCommit, Job job) {
        DSLContext ctx = context.on(autoCommit);
        String error = "its last attempt (" + job.maxAttempts() + " of " + job.maxAttempts()
                + ") did not finish: the worker died before recording its outcome"
                + (job.lastError() == null ? "" : "; before: " + job.lastError());
        return settlement.observed(
                job,
                () -> onHeldJob(
                                        ctx,
                                        c -> Generations.lookingAgain(
                                                c,
                                                asClaimed(job),
                                                () -> History.move(
                                                                c,
                                                                JOBS.ID.in(heldAsClaimed(c, job)),
                                                                Map.of(
                                                                        JOBS.STATUS, Sql.FAILED,
                                                                        JOBS.ATTEMPTS, DSL.val(job.maxAttempts()),
                                                                        JOBS.FINISHED_AT, DSL.currentOffsetDateTime(),
                                                                        JOBS.UPDATED_AT, Sql.statementTime(),
                                                                        JOBS.LAST_ERROR,
                                                                                DSL.val(Settlement.storable(error))))
                                                        .execute(),
                                                failed -> failed == 1),
                                        0)
                                == 1
                        ? new FailResult(FailResult.Outcome.FAILED, Optional.empty())
                        : new FailResult(FailResult.Outcome.LEASE_LOST, Optional.empty()),
                false);
    }

    /**
     * Runs {@code statement} on a two-phase job in a transaction of its own, under a bounded lock
     * wait; {@code whenHeld} when the job's row stayed locked all along.
     */
    private static <T> T onHeldJob(DSLContext autoCommit, Function<DSLContext, T> statement, T whenHeld) {
        try {
            return Errors.translating(() ->
                    autoCommit.transactionResult(c -> LOCK_WAIT.run(c.dsl(), () -> statement.apply(c.dsl()))));
        } catch (LockNotAvailableException stillHeld) {
            return whenHeld;
        }
    }

    /**
     * The job's id, locked, while it is pending with the attempts and the fence its two-phase claim
     * gave it (the attempts alone would match again after another claimer took the job and
     * snoozed or released it, which gives the attempt back; the fence only grows). It
     * waits for the lock rather than skipping it: a claim whose snapshot still saw the job as due
     * locks it for a moment before it finds it changed (and leaves it), and skipping would take
     * that for another claimer. The lock wait is bounded.
     */
    private static Select<Record1<Long>> heldAsClaimed(DSLContext ctx, Job job) {
        return locked(ctx, asClaimed(job));
    }

    /** The id of the job {@code which} finds, locked (waiting for the lock: see {@link #heldAsClaimed}). */
    private static Select<Record1<Long>> locked(DSLContext ctx, Condition which) {
        return ctx.select(JOBS.ID).from(JOBS).where(which).forUpdate();
    }

    /** The job, while it is pending with the attempts and the fence its two-phase claim gave it. */
    private static Condition asClaimed(Job job) {
        return JOBS.ID
                .eq(job.id())
                .and(JOBS.SHARD.eq(job.shard()))
                .and(JOBS.STATUS.eq(Sql.PENDING))
                .and(JOBS.ATTEMPTS.eq(job.attempts()))
                .and(JOBS.FENCE.eq(job.fence()));
    }
}

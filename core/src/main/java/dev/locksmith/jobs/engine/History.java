package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;

import dev.locksmith.codegen.tables.records.JobHistoryRecord;
import dev.locksmith.codegen.tables.records.JobsRecord;
import dev.locksmith.jobs.Job;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.jooq.CommonTableExpression;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.InsertOnDuplicateStep;
import org.jooq.InsertValuesStepN;
import org.jooq.JSONB;
import org.jooq.Record;
import org.jooq.SelectField;
import org.jooq.TableField;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * The statements that put a finished job in {@code job_history}, the partitioned table that keeps
 * finished jobs out of the hot {@code jobs} table (docs/queue.md, "History"). A job that finishes
 * for good while its row is in {@code jobs} is moved by one statement,
 * {@code WITH moved AS (DELETE FROM jobs WHERE ... RETURNING ...) INSERT INTO job_history SELECT *
 * FROM moved}: the delete and the insert commit together or not at all, and a concurrent
 * transition that deletes or changes the row first leaves nothing for this one to move (the
 * delete finds no row, the insert inserts none). So a finished job is in exactly one of the two
 * tables at every commit. <b>Internal: not API.</b>
 */
final class History {

    /** The columns of {@code jobs} that a finished job keeps, in the order of {@link #KEPT}. */
    static final List<TableField<JobsRecord, ?>> FROM_JOBS = List.of(
            JOBS.ID,
            JOBS.QUEUE,
            JOBS.SHARD,
            JOBS.KIND,
            JOBS.PAYLOAD,
            JOBS.PRIORITY,
            JOBS.RUN_AT,
            JOBS.STATUS,
            JOBS.ATTEMPTS,
            JOBS.MAX_ATTEMPTS,
            JOBS.UNIQUE_KEY,
            JOBS.ORDERING_KEY,
            JOBS.TRACEPARENT,
            JOBS.LAST_ERROR,
            JOBS.CREATED_AT,
            JOBS.UPDATED_AT,
            JOBS.FINISHED_AT,
            JOBS.FENCE,
            JOBS.CONCURRENCY_KEY);

    /** The same columns in {@code job_history}. */
    static final List<TableField<JobHistoryRecord, ?>> KEPT = List.of(
            JOB_HISTORY.ID,
            JOB_HISTORY.QUEUE,
            JOB_HISTORY.SHARD,
            JOB_HISTORY.KIND,
            JOB_HISTORY.PAYLOAD,
            JOB_HISTORY.PRIORITY,
            JOB_HISTORY.RUN_AT,
            JOB_HISTORY.STATUS,
            JOB_HISTORY.ATTEMPTS,
            JOB_HISTORY.MAX_ATTEMPTS,
            JOB_HISTORY.UNIQUE_KEY,
            JOB_HISTORY.ORDERING_KEY,
            JOB_HISTORY.TRACEPARENT,
            JOB_HISTORY.LAST_ERROR,
            JOB_HISTORY.CREATED_AT,
            JOB_HISTORY.UPDATED_AT,
            JOB_HISTORY.FINISHED_AT,
            JOB_HISTORY.FENCE,
            JOB_HISTORY.CONCURRENCY_KEY);

    /**
     * The columns whose new values are times ({@code now()}, the statement's time): set by the
     * insert's {@code SELECT}, not in the delete's {@code RETURNING}, where Citus refuses
     * functions that are not immutable. Their values must not refer to the row being moved.
     */
    private static final List<TableField<JobsRecord, ?>> TIMES = List.of(JOBS.FINISHED_AT, JOBS.UPDATED_AT);

    private History() {}

    /**
     * Moves the rows of {@code jobs} that match {@code which} into {@code job_history}, with the
     * columns in {@code set} replaced by expressions over the row being moved (its status and
     * {@code finished_at} at least; see {@link #finishing}). Returns the insert, to which the
     * caller adds its {@code RETURNING}.
     *
     * @param ctx the context to build on (the caller's, or the queue's for a rendered statement)
     * @param which the rows to move; lock them (FOR UPDATE in a subquery, or a key) as the
     *     statement it replaces did
     * @param set history column values, as expressions over {@code jobs}' columns (immutable
     *     ones: Citus refuses others in {@code RETURNING}), or, for {@code finished_at} and
     *     {@code updated_at}, times that do not refer to the row
     */
    static InsertOnDuplicateStep<JobHistoryRecord> move(
            DSLContext ctx, Condition which, Map<TableField<JobsRecord, ?>, Field<?>> set) {
        List<SelectField<?>> returned = new ArrayList<>(FROM_JOBS.size());
        for (TableField<JobsRecord, ?> column : FROM_JOBS) {
            Field<?> value = TIMES.contains(column) ? null : set.get(column);
            returned.add(value == null ? column : value.as(column.getUnqualifiedName()));
        }
        CommonTableExpression<Record> moved =
                DSL.name("moved").as(DSL.deleteFrom(JOBS).where(which).returningResult(returned));
        List<SelectField<?>> inserted = new ArrayList<>(FROM_JOBS.size());
        for (TableField<JobsRecord, ?> column : FROM_JOBS) {
            Field<?> time = TIMES.contains(column) ? set.get(column) : null;
            inserted.add(time == null ? moved.field(column.getUnqualifiedName()) : time);
        }
        return ctx.with(moved)
                .insertInto(JOB_HISTORY)
                .columns(KEPT)
                .select(DSL.select(inserted).from(moved));
    }

    /** A job's finishing values: its status, finished now, updated now. */
    static Map<TableField<JobsRecord, ?>, Field<?>> finishing(Field<String> status) {
        return Map.of(
                JOBS.STATUS, status,
                JOBS.FINISHED_AT, DSL.currentOffsetDateTime(),
                JOBS.UPDATED_AT, DSL.currentOffsetDateTime());
    }

    /** {@link #finishing} with {@code last_error} set. */
    static Map<TableField<JobsRecord, ?>, Field<?>> finishing(Field<String> status, Field<String> lastError) {
        return Map.of(
                JOBS.STATUS,
                status,
                JOBS.FINISHED_AT,
                DSL.currentOffsetDateTime(),
                JOBS.UPDATED_AT,
                DSL.currentOffsetDateTime(),
                JOBS.LAST_ERROR,
                lastError);
    }

    /**
     * Writes jobs whose rows a transactional claim deleted straight into {@code job_history},
     * finished now with {@code status}, in one statement in the caller's transaction: the jobs in
     * hand, with the attempts they counted, and {@code lastError} (each job's own when null).
     */
    static int insert(DSLContext ctx, Collection<Job> jobs, Field<String> status, @Nullable String lastError) {
        InsertValuesStepN<JobHistoryRecord> insert = ctx.insertInto(JOB_HISTORY).columns(KEPT);
        for (Job job : jobs) {
            insert = insert.values(Arrays.asList(
                    DSL.val(job.id()),
                    DSL.val(job.queue()),
                    DSL.val(job.shard()),
                    DSL.val(job.kind()),
                    DSL.val(JSONB.valueOf(job.payload())),
                    DSL.val((short) job.priority()),
                    DSL.val(job.runAt()),
                    status,
                    DSL.val(job.attempts()),
                    DSL.val(job.maxAttempts()),
                    DSL.val(job.uniqueKey(), JOB_HISTORY.UNIQUE_KEY),
                    DSL.val(job.orderingKey(), JOB_HISTORY.ORDERING_KEY),
                    DSL.val(job.traceparent(), JOB_HISTORY.TRACEPARENT),
                    DSL.val(lastError == null ? job.lastError() : lastError, JOB_HISTORY.LAST_ERROR),
                    DSL.val(job.createdAt()),
                    DSL.currentOffsetDateTime(),
                    DSL.currentOffsetDateTime(),
                    DSL.val(job.fence()),
                    DSL.val(job.concurrencyKey(), JOB_HISTORY.CONCURRENCY_KEY)));
        }
        return insert.execute();
    }
}

package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;

import dev.locksmith.internal.Errors;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.internal.Texts;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.QueueDepth;
import dev.locksmith.jobs.QueueStats;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/** Reading jobs and the queue's state; nothing here locks or writes. <b>Internal: not API.</b> */
public final class Reads {

    private final QueueContext context;

    Reads(QueueContext context) {
        this.context = context;
    }

    /**
     * Reads a job without locking it: in {@code jobs}, else in {@code job_history} (one index probe
     * per partition).
     *
     * @return the job as of {@code tx}'s snapshot; empty when its row is gone
     */
    public Optional<Job> find(DSLContext tx, long id) {
        DSLContext ctx = context.on(tx);
        return Errors.translating(() -> ctx.selectFrom(JOBS)
                .where(JOBS.ID.eq(id))
                .fetchOptional()
                .map(r -> context.job(JobRow.of(r)))
                .or(() -> ctx.selectFrom(JOB_HISTORY)
                        .where(JOB_HISTORY.ID.eq(id))
                        .limit(1)
                        .fetchOptional()
                        .map(r -> context.job(JobRow.of(r)))));
    }

    /**
     * Reads jobs without locking them, in {@code jobs} and in {@code job_history}.
     *
     * @return the jobs found, by id, as of {@code tx}'s snapshot
     */
    public Map<Long, Job> findAll(DSLContext tx, Collection<Long> ids) {
        DSLContext ctx = context.on(tx);
        return Errors.translating(() -> {
            Map<Long, Job> found = new HashMap<>(
                    ctx.selectFrom(JOBS).where(JOBS.ID.in(ids)).fetchMap(JOBS.ID, r -> context.job(JobRow.of(r))));
            if (found.size() < ids.size()) {
                ctx.selectFrom(JOB_HISTORY)
                        .where(JOB_HISTORY.ID.in(ids))
                        .forEach(r -> found.putIfAbsent(r.getId(), context.job(JobRow.of(r))));
            }
            return found;
        });
    }

    /**
     * Whether the caller's transaction has written anything so far (it has a transaction id).
     *
     * @param tx the caller's transaction
     */
    public boolean wroteInTransaction(DSLContext tx) {
        DSLContext ctx = context.on(tx);
        if (sentNothing(ctx)) {
            return false;
        }
        if (context.shards(ctx) > 0) {
            // On Citus, writes that went to worker nodes need not assign the coordinator's
            // transaction id: a handler that sent anything is taken to have written.
            return true;
        }
        RenderedQuery statement = context.statements.wroteInTransaction;
        return statement
                .fetchOptional(ctx, statement.binds(), row -> row.getBoolean(1))
                .orElse(true);
    }

    /**
     * Whether nothing at all was sent in the transaction on {@code tx}'s connection (PgJDBC
     * begins a transaction lazily, with its first statement): a handler that did not use the
     * database then costs no round trip. False when the driver cannot tell.
     */
    private static boolean sentNothing(DSLContext tx) {
        return tx.connectionResult(c -> c.isWrapperFor(BaseConnection.class)
                && c.unwrap(BaseConnection.class).getTransactionState() == TransactionState.IDLE);
    }

    /**
     * Of {@code ids}, those whose job is still there and not {@code done}: after a completion
     * whose outcome is unknown, the others were completed (by it, or by whoever held the job
     * later).
     */
    public Set<Long> unfinished(Collection<Long> ids) {
        return Errors.translating(() -> context.dsl
                .select(JOBS.ID)
                .from(JOBS)
                .where(JOBS.ID.in(ids))
                .and(JOBS.STATUS.ne(Sql.DONE))
                .unionAll(DSL.select(JOB_HISTORY.ID)
                        .from(JOB_HISTORY)
                        .where(JOB_HISTORY.ID.in(ids))
                        .and(JOB_HISTORY.STATUS.ne(Sql.DONE)))
                .fetchSet(JOBS.ID));
    }

    /**
     * Row counts per queue and status of {@code jobs}, and the age of each queue's oldest due
     * pending job: two read-only statements (a scan of the hot table, not of the history).
     *
     * @return one entry per queue that has rows, ordered by queue name
     */
    public List<QueueStats> stats() {
        DSLContext dsl = context.dsl;
        return Errors.translating(() -> {
            Map<String, Map<JobStatus, Long>> counts = new TreeMap<>();
            dsl.select(JOBS.QUEUE, JOBS.STATUS, DSL.count())
                    .from(JOBS)
                    .groupBy(JOBS.QUEUE, JOBS.STATUS)
                    .fetch()
                    .forEach(r -> counts.computeIfAbsent(r.value1(), q -> new EnumMap<>(JobStatus.class))
                            .put(JobRow.status(r.value2()), r.value3().longValue()));
            Map<String, Duration> oldest = new HashMap<>();
            dsl.select(JOBS.QUEUE, DSL.min(JOBS.RUN_AT), DSL.currentOffsetDateTime())
                    .from(JOBS)
                    .where(JOBS.STATUS.eq(Sql.PENDING).and(JOBS.RUN_AT.le(DSL.currentOffsetDateTime())))
                    .groupBy(JOBS.QUEUE)
                    .fetch()
                    .forEach(r -> oldest.put(r.value1(), Duration.between(r.value2(), r.value3())));
            List<QueueStats> result = new ArrayList<>();
            counts.forEach((queue, byStatus) ->
                    result.add(new QueueStats(queue, Map.copyOf(byStatus), Optional.ofNullable(oldest.get(queue)))));
            return result;
        });
    }

    /**
     * How deep {@code queue} is, measured with work bounded by {@code cap} whatever the table
     * holds: pending jobs counted on the claim index up to {@code cap}, running jobs on the lease
     * index up to {@code cap}, and the age of the oldest due pending job found with two index
     * probes per distinct priority of the queue's pending jobs. One read-only statement; on
     * Citus, which refuses its recursive lookup across shards, one for the counts and one per
     * shard for the oldest due job (the first depth there also costs the refused statement and
     * the look at the layout).
     */
    public QueueDepth depth(String queue, int cap) {
        Texts.requireName("queue", queue, 128);
        if (cap < 1 || cap > 1_000_000) {
            throw new IllegalArgumentException("cap must be between 1 and 1000000, was " + cap);
        }
        Field<String> q = DSL.val(queue);
        Field<Integer> limit = DSL.val(cap);
        Field<Integer> pending = DSL.field(DSL.selectCount()
                .from(DSL.select(DSL.inline(1))
                        .from(JOBS)
                        .where(JOBS.QUEUE.eq(q).and(JOBS.STATUS.eq(Sql.PENDING)))
                        .limit(limit)));
        Field<Integer> running = DSL.field(DSL.selectCount()
                .from(DSL.select(DSL.inline(1))
                        .from(JOBS)
                        .where(JOBS.STATUS.eq(Sql.RUNNING).and(JOBS.QUEUE.eq(q)))
                        .limit(limit)));
        Field<OffsetDateTime> now = DSL.currentOffsetDateTime();
        return Errors.translating(() -> {
            if (context.distribution.known() <= 0) {
                try {
                    var row = context.dsl
                            .select(pending, running, oldestDue(q, DSL.noCondition()), now)
                            .fetchSingle();
                    return depth(queue, cap, row.value1(), row.value2(), row.value3(), row.value4());
                } catch (RuntimeException e) {
                    if (!context.refusedByCitus(e)) {
                        throw e;
                    }
                }
            }
            var counts = context.dsl.select(pending, running).fetchSingle();
            Duration oldest = null;
            for (int shard = 0, shards = context.shards(context.dsl); shard < shards; shard++) {
                // each age by its own statement's clock, which its run_at <= now() was read with
                var found = context.dsl
                        .select(oldestDue(q, JOBS.SHARD.eq(DSL.inline(shard))), now)
                        .fetchSingle();
                if (found.value1() != null) {
                    Duration age = Duration.between(found.value1(), found.value2());
                    oldest = oldest == null || age.compareTo(oldest) > 0 ? age : oldest;
                }
            }
            return new QueueDepth(queue, counts.value1(), counts.value2(), cap, Optional.ofNullable(oldest));
        });
    }

    private static QueueDepth depth(
            String queue, int cap, int pending, int running, @Nullable OffsetDateTime oldest, OffsetDateTime now) {
        return new QueueDepth(
                queue,
                pending,
                running,
                cap,
                oldest == null ? Optional.empty() : Optional.of(Duration.between(oldest, now)));
    }

    /**
     * The oldest due {@code run_at} of the queue's pending jobs within {@code scope}: a loose index
     * scan over the priorities of those jobs, and for each the first entry of (queue, priority,
     * run_at) with {@code run_at <= now()}.
     *
     * <p>The queue is compared as the claim compares it ({@link JobStatements#valueUnseen}): a
     * custom plan that saw a queue the last ANALYZE missed would read and sort all its pending jobs
     * for each {@code ORDER BY ... LIMIT 1}. The counts keep the value in view: expecting every row
     * of a partition to be of the queue, a plan would scan the partition for a queue that is rare.
     */
    private static Field<OffsetDateTime> oldestDue(Field<String> queue, Condition scope) {
        Field<String> unseen = JobStatements.valueUnseen(queue);
        Condition pendingOfQueue =
                JOBS.QUEUE.eq(unseen).and(JOBS.STATUS.eq(Sql.PENDING)).and(scope);
        var priorities = DSL.name("priorities");
        var priority = DSL.field(DSL.name("priorities", "priority"), SQLDataType.SMALLINT);
        var cte = priorities
                .fields("priority")
                .as(DSL.select(DSL.field(DSL.select(JOBS.PRIORITY)
                                .from(JOBS)
                                .where(pendingOfQueue)
                                .orderBy(JOBS.PRIORITY)
                                .limit(1)))
                        .unionAll(DSL.select(DSL.field(DSL.select(JOBS.PRIORITY)
                                        .from(JOBS)
                                        .where(pendingOfQueue)
                                        .and(JOBS.PRIORITY.gt(priority))
                                        .orderBy(JOBS.PRIORITY)
                                        .limit(1)))
                                .from(DSL.table(priorities))
                                .where(priority.isNotNull())));
        Field<OffsetDateTime> oldestPerPriority = DSL.field(DSL.select(JOBS.RUN_AT)
                .from(JOBS)
                .where(pendingOfQueue)
                .and(JOBS.PRIORITY.eq(priority))
                .and(JOBS.RUN_AT.le(DSL.currentOffsetDateTime()))
                .orderBy(JOBS.RUN_AT)
                .limit(1));
        return DSL.field(
                DSL.withRecursive(cte).select(DSL.min(oldestPerPriority)).from(DSL.table(priorities)));
    }
}

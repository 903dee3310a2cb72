package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;

import dev.locksmith.codegen.tables.records.JobsRecord;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.Job;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Param;
import org.jooq.Select;
import org.jooq.SelectField;
import org.jooq.UpdateSetFirstStep;
import org.jooq.UpdateSetMoreStep;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The queue's hot statements (claims, heartbeats, completion), written in the DSL and rendered
 * once per {@code JobQueue} (see {@link RenderedQuery} for why). Parameter names are the
 * constants below. Every one returns rows (the changed rows' ids where the caller wants only a
 * count): see {@link RenderedQuery#execute}.
 */
final class JobStatements {

    static final String QUEUE = "queue";
    static final String SHARDS = "shards";
    static final String SHARD = "shard";
    /** A random token per leased claim of one shard, from which its lease ids derive. */
    static final String CLAIM_TOKEN = "claim_token";

    static final String WORKER = "worker";
    static final String LEASE = "lease";
    static final String ID = "id";
    static final String IDS = "ids";
    static final String LEASE_ID = "lease_id";
    static final String LEASE_IDS = "lease_ids";
    static final String HOLD = "hold";
    /** The partition of {@code jobs} the leased jobs of a statement are in ({@link JobRow#slot()}). */
    static final String SLOT = "slot";

    /** The columns a {@link Job} is made of. */
    static final List<SelectField<?>> JOB_COLUMNS = List.of(
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
            JOBS.LOCKED_BY,
            JOBS.LOCKED_UNTIL,
            JOBS.UNIQUE_KEY,
            JOBS.LAST_ERROR,
            JOBS.CREATED_AT,
            JOBS.LEASE_ID,
            JOBS.TRACEPARENT,
            JOBS.ORDERING_KEY,
            JOBS.FENCE,
            JOBS.SLOT,
            JOBS.CONCURRENCY_KEY);

    /**
     * Claim statements are rendered per limit, which is written as a literal: with {@code LIMIT $n}
     * a generic plan cannot know how few rows are wanted, and on PostgreSQL 15 a single-job claim
     * ran at half the rate of the same claim with {@code LIMIT 1} (pgbench, 16 clients). A
     * worker claims with a handful of limits, each one statement of its own, prepared once per
     * connection. At most {@value #CACHED_LIMITS} limits per kind are kept.
     */
    private static final int CACHED_LIMITS = 256;

    private final DSLContext dsl;
    private final Map<Integer, RenderedQuery> claimsInTransaction = new ConcurrentHashMap<>();
    private final Map<Integer, RenderedQuery> leaseClaims = new ConcurrentHashMap<>();
    private final Map<Integer, RenderedQuery> twoPhaseClaims = new ConcurrentHashMap<>();
    private final Param<String> worker = DSL.param(WORKER, SQLDataType.VARCHAR);
    private final Field<OffsetDateTime> leaseEnd =
            DSL.currentOffsetDateTime().plus(DSL.param(LEASE, SQLDataType.INTERVALDAYTOSECOND));
    final RenderedQuery heartbeat;
    final RenderedQuery heartbeatAll;
    final RenderedQuery completeByDeleting;
    final RenderedQuery completeKeepingDone;
    /** {@link #heartbeatAll} of the jobs of one shard ({@link #SHARD}): a router statement on Citus. */
    final RenderedQuery heartbeatInShard;
    /** {@link #completeByDeleting} of the jobs of one shard ({@link #SHARD}). */
    final RenderedQuery completeByDeletingInShard;
    /** {@link #completeKeepingDone} of the jobs of one shard ({@link #SHARD}). */
    final RenderedQuery completeKeepingDoneInShard;
    /**
     * Whether the current transaction has written anything (has a transaction id): a handler
     * whose transaction wrote nothing can have its job completed after it commits.
     */
    final RenderedQuery wroteInTransaction;

    JobStatements(DSLContext dsl) {
        this.dsl = dsl;
        heartbeat = RenderedQuery.of(
                dsl,
                dsl.update(JOBS)
                        .set(JOBS.LOCKED_UNTIL, leaseEnd)
                        .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(JOBS.ID.eq(DSL.param(ID, SQLDataType.BIGINT)))
                        .and(inSlot())
                        .and(JOBS.STATUS.eq(Sql.RUNNING))
                        .and(JOBS.LEASE_ID.eq(DSL.param(LEASE_ID, SQLDataType.UUID)))
                        .returning(JOBS.ID));
        Condition inShard = JOBS.SHARD.eq(DSL.param(SHARD, SQLDataType.INTEGER));
        heartbeatAll = heartbeatAll(dsl, ownedByAll());
        heartbeatInShard = heartbeatAll(dsl, inShard.and(ownedByAll()));
        completeByDeleting = completeByDeleting(dsl, ownedByAll());
        completeByDeletingInShard = completeByDeleting(dsl, inShard.and(ownedByAll()));
        completeKeepingDone = completeKeepingDone(dsl, ownedByAll());
        completeKeepingDoneInShard = completeKeepingDone(dsl, inShard.and(ownedByAll()));
        wroteInTransaction = RenderedQuery.of(
                dsl, dsl.select(DSL.field("txid_current_if_assigned() IS NOT NULL", SQLDataType.BOOLEAN)));
    }

    private RenderedQuery heartbeatAll(DSLContext dsl, Condition owned) {
        return RenderedQuery.of(
                dsl,
                dsl.update(JOBS)
                        .set(JOBS.LOCKED_UNTIL, leaseEnd)
                        .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(owned)
                        .returning(JOBS.LEASE_ID));
    }

    private static RenderedQuery completeByDeleting(DSLContext dsl, Condition owned) {
        return RenderedQuery.of(dsl, dsl.deleteFrom(JOBS).where(owned).returning(JOBS.ID));
    }

    /** Completion with {@code keepCompleted}: the rows move to {@code job_history} as {@code done}. */
    private static RenderedQuery completeKeepingDone(DSLContext dsl, Condition owned) {
        return RenderedQuery.of(
                dsl, History.move(dsl, owned, History.finishing(Sql.DONE)).returning(JOB_HISTORY.ID));
    }

    /**
     * Which shards a claim reads: all of them, those in the {@link #SHARDS} array, or the one
     * {@link #SHARD} (on Citus, where only a claim naming one shard runs as a single-shard
     * query, and {@code FOR UPDATE} is refused in any other).
     */
    enum Shards {
        ALL,
        SOME,
        ONE
    }

    /** {@code DELETE ... RETURNING} of up to {@code limit} claimable jobs, in the caller's transaction. */
    RenderedQuery claimInTransaction(int limit, Shards shards) {
        return cached(
                claimsInTransaction,
                limit,
                shards,
                () -> dsl.deleteFrom(JOBS).where(claimed(shards, limit)).returning(JOB_COLUMNS));
    }

    /** The leased claim of up to {@code limit} jobs: one auto-committed {@code UPDATE ... RETURNING}. */
    RenderedQuery claim(int limit, Shards shards) {
        return cached(leaseClaims, limit, shards, () -> leaseUpdate(dsl, worker, leaseEnd, shards, limit));
    }

    /** The first, auto-committed step of a two-phase claim ({@link #twoPhaseClaim}). */
    RenderedQuery claimTwoPhase(int limit, Shards shards) {
        return cached(twoPhaseClaims, limit, shards, () -> twoPhaseClaim(dsl, shards, limit));
    }

    private RenderedQuery cached(
            Map<Integer, RenderedQuery> cache, int limit, Shards shards, Supplier<org.jooq.Query> query) {
        int key = switch (shards) {
            case ALL -> limit;
            case SOME -> -limit;
            case ONE -> limit + Claim.MAX_LIMIT;
        };
        RenderedQuery hit = cache.get(key);
        if (hit != null) {
            return hit;
        }
        RenderedQuery rendered = RenderedQuery.of(dsl, query.get());
        if (cache.size() < CACHED_LIMITS) {
            cache.putIfAbsent(key, rendered);
        }
        return rendered;
    }

    private static org.jooq.Query leaseUpdate(
            DSLContext dsl, Param<String> worker, Field<OffsetDateTime> leaseEnd, Shards shards, int limit) {
        // no slot: a keyed job a plain claim takes (its queue had no limit) counts as running in
        // none of its key's slots, which the keyed claim counts as taking the highest
        return leased(dsl.update(JOBS), worker, leaseEnd, shards == Shards.ONE)
                .set(JOBS.KEY_SLOT, DSL.castNull(SQLDataType.SMALLINT))
                .where(claimed(shards, limit))
                .returning(JOB_COLUMNS);
    }

    /**
     * What a leased claim writes to each job it claims: {@code running}, held by {@link #WORKER}
     * until now plus {@link #LEASE}, a random lease id (for a claim of one shard on Citus,
     * {@code onShard}, one derived from {@link #CLAIM_TOKEN} and the job's id:
     * {@link #derivedLeaseId}), the attempt and the fence counted.
     */
    static UpdateSetMoreStep<JobsRecord> leased(UpdateSetFirstStep<JobsRecord> update, boolean onShard) {
        return leased(
                update,
                DSL.param(WORKER, SQLDataType.VARCHAR),
                DSL.currentOffsetDateTime().plus(DSL.param(LEASE, SQLDataType.INTERVALDAYTOSECOND)),
                onShard);
    }

    private static UpdateSetMoreStep<JobsRecord> leased(
            UpdateSetFirstStep<JobsRecord> update,
            Param<String> worker,
            Field<OffsetDateTime> leaseEnd,
            boolean derivedLeaseId) {
        return update.set(JOBS.STATUS, Sql.RUNNING)
                .set(JOBS.LOCKED_BY, worker)
                .set(JOBS.LOCKED_UNTIL, leaseEnd)
                .set(
                        JOBS.LEASE_ID,
                        derivedLeaseId ? derivedLeaseId() : DSL.function("gen_random_uuid", SQLDataType.UUID))
                .set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.plus(DSL.inline(1)))
                .set(JOBS.FENCE, JOBS.FENCE.plus(DSL.inline(1L)))
                .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime());
    }

    /**
     * A lease id for a claim of one shard (on Citus), unique per row and claim like a random one:
     * the md5 of a random token bound per claim ({@link #CLAIM_TOKEN}) and the job's id. Citus
     * refuses volatile functions such as {@code gen_random_uuid()} in an UPDATE of a distributed
     * table; {@code md5} is immutable.
     */
    private static Field<UUID> derivedLeaseId() {
        return DSL.field(
                "md5({0} || {1}::text)::uuid", SQLDataType.UUID, DSL.param(CLAIM_TOKEN, SQLDataType.VARCHAR), JOBS.ID);
    }

    /**
     * The first step of {@code TwoPhaseWorker}'s claim, auto-committed: counts the attempt and
     * holds the job ({@code run_at} moved ahead by the hold), leaving it {@code pending}, so that
     * a rollback of the claiming transaction later restores a job whose attempt is counted and
     * that no claimer takes before the worker has written its backoff.
     */
    private static org.jooq.Query twoPhaseClaim(DSLContext dsl, Shards shards, int limit) {
        // no slot: a keyed job a plain claim holds (its queue had no limit) holds none of its key's
        // slots, nor does it keep one a lapsed keyed hold left
        return held(dsl.update(JOBS))
                .set(JOBS.KEY_SLOT, DSL.castNull(SQLDataType.SMALLINT))
                .where(claimed(shards, limit))
                .returning(JOB_COLUMNS);
    }

    /**
     * What the first step of a two-phase claim writes to each job it claims: the attempt and the
     * fence counted, and {@code run_at} at the end of the hold ({@link #HOLD} from now); the job
     * stays {@code pending}.
     */
    static UpdateSetMoreStep<JobsRecord> held(UpdateSetFirstStep<JobsRecord> update) {
        return update.set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.plus(DSL.inline(1)))
                .set(JOBS.FENCE, JOBS.FENCE.plus(DSL.inline(1L)))
                .set(JOBS.RUN_AT, Sql.statementTime().plus(DSL.param(HOLD, SQLDataType.INTERVALDAYTOSECOND)))
                .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime());
    }

    /**
     * The rows a claim changes: those whose ids {@link #claimable} returns, and, for a claim of
     * one shard, only on that shard, so that on Citus the whole statement names one shard and
     * runs on one node (a router query).
     */
    private static Condition claimed(Shards shards, int limit) {
        Condition ids = JOBS.ID.eq(DSL.any(DSL.array(claimable(shards, limit))));
        return shards == Shards.ONE
                ? JOBS.SHARD.eq(DSL.param(SHARD, SQLDataType.INTEGER)).and(ids)
                : ids;
    }

    /**
     * Ids of due pending jobs of the queue, in claim order, locked with SKIP LOCKED, each either
     * without an ordering key or the head of its key ({@link #headOfItsKey(boolean)}). The status is a
     * literal, so that even a generic plan can use jobs_claimable_idx. Due is judged by the
     * statement's clock, as {@code run_at} is written, so a claim late in a long transaction sees
     * the jobs due by then.
     *
     * <p>The claim takes {@code id = ANY(ARRAY(<this>))}, not {@code id IN (<this>)}: the array is
     * an init plan run once, after which the rows are found by primary key. With {@code IN}, at
     * 500 jobs per claim on a 50,000-row table the planner chose a hash semi-join over a scan of
     * the whole table (12.8 ms per claim against 0.5 ms at 100).
     */
    private static Select<org.jooq.Record1<Long>> claimable(Shards shards, int limit) {
        Param<String> queue = DSL.param(QUEUE, SQLDataType.VARCHAR);
        // On one server the queue is compared with (SELECT :queue), a value the planner does not
        // see: see valueUnseen. Citus's single-shard claims keep the bare parameter, since a
        // subquery there may turn the claim into a multi-shard plan.
        Condition due = JOBS.QUEUE
                .eq(shards == Shards.ONE ? queue : valueUnseen(queue))
                .and(JOBS.STATUS.eq(Sql.PENDING))
                .and(JOBS.RUN_AT.le(Sql.statementTime()));
        if (shards == Shards.SOME) {
            due = due.and(JOBS.SHARD.eq(DSL.any(DSL.param(SHARDS, SQLDataType.INTEGER.array()))));
        } else if (shards == Shards.ONE) {
            due = JOBS.SHARD.eq(DSL.param(SHARD, SQLDataType.INTEGER)).and(due);
        }
        return DSL.select(JOBS.ID)
                .from(JOBS)
                .where(due)
                .and(notLimited())
                .and(JOBS.ORDERING_KEY.isNull().or(headOfItsKey(shards == Shards.ONE)))
                .orderBy(JOBS.PRIORITY, JOBS.RUN_AT, JOBS.ID)
                .limit(DSL.inline(limit))
                .forUpdate()
                .skipLocked();
    }

    /**
     * {@code (SELECT :value)}: a value the planner sees only when the statement runs (an init
     * plan), so that it plans the claim of every queue as a generic plan does, expecting the
     * partition's rows divided by the number of queues in its statistics. Seeing the value (a
     * custom plan: PgJDBC's first executions of a statement on a connection, and every one behind
     * a transaction pooler with {@code prepareThreshold=0}), it expects a queue that the last
     * ANALYZE did not see, or saw rarely, to hold a row or two; expecting so few it reads every
     * partition's jobs of the queue and sorts them, rather than merging the partitions' claim
     * indexes in claim order, and a queue that has since grown to 50,000 jobs is then sorted
     * whole on every claim (40-104 ms against about 1 ms, PostgreSQL 15; until an ANALYZE of the
     * partition, which with autovacuum off never comes). On one table the index alone gives the
     * order, so the estimate never mattered there.
     */
    static Field<String> valueUnseen(Field<String> value) {
        return DSL.field(DSL.select(value));
    }

    /**
     * The job counts toward no concurrency limit: it has no concurrency key, or its queue has no
     * limit at all. A keyed job of a queue with limits is {@link KeyedClaims}' to claim. The
     * {@code NOT EXISTS} (one probe of the limits' key, correlated with the row's queue, so that
     * the statement keeps its one parameter for the queue) runs only for a row that has a key: it
     * comes second in the {@code OR}. On Citus the limits are a reference table (queue-018), which
     * a claim of one shard reads on the shard's node.
     */
    private static Condition notLimited() {
        return JOBS.CONCURRENCY_KEY
                .isNull()
                .or(DSL.condition(
                        "NOT EXISTS ({0})",
                        DSL.selectOne()
                                .from(JOB_CONCURRENCY_LIMITS)
                                .where(JOB_CONCURRENCY_LIMITS.QUEUE.eq(JOBS.QUEUE))));
    }

    /**
     * The candidate row is the head of its ordering key: no live (pending or running) job of the
     * same queue and key has a lower id. One probe of jobs_ordering_key_live_idx (the statuses
     * are literals, so that a generic plan can prove the index's predicate), evaluated only for
     * rows that have a key: {@code ordering_key IS NULL} comes first in the {@code OR}, so jobs
     * without a key cost the claim one null test.
     *
     * <p>Why this alone keeps a key's jobs one at a time (JobQueue's class description has the
     * whole argument): while a job is running, or held by a transactional claim that has not
     * committed, it is live in every snapshot, so every later job of its key fails this test; and
     * the claimer that finds the head itself locked skips it with the rest. What the test cannot
     * see is a job of the key with a lower id whose enqueue has not committed yet; the enqueue's
     * per-key lock ({@link OrderingLocks}) rules that out, by making ids within a key follow commit
     * order.
     */
    private static Condition headOfItsKey(boolean sameShard) {
        dev.locksmith.codegen.tables.JobsTable earlier = JOBS.as("earlier");
        Condition sameKey = earlier.QUEUE.eq(JOBS.QUEUE).and(earlier.ORDERING_KEY.eq(JOBS.ORDERING_KEY));
        // A claim of one shard looks for earlier jobs of the key on that shard only: on Citus a
        // key's jobs all go to the shard derived from the key (JobQueue, "Citus"), and a
        // subquery reaching other shards would make the claim a multi-shard query. Citus plans
        // a single-shard query only when every reference to the table is filtered by the same
        // value: the parameter, not a correlation with the outer row.
        if (sameShard) {
            sameKey = earlier.SHARD.eq(DSL.param(SHARD, SQLDataType.INTEGER)).and(sameKey);
        }
        // NOT EXISTS as a template rather than DSL.notExists(Select): jOOQ 3.21 replaced that method
        // by notExists(TableLike), so code compiled against 3.19 fails to link on 3.21
        // (NoSuchMethodError, on every claim); DSL.condition(String, QueryPart...) is in both.
        return DSL.condition(
                "NOT EXISTS ({0})",
                DSL.selectOne()
                        .from(earlier)
                        .where(sameKey)
                        .and(earlier.STATUS.in(Sql.LIVE))
                        .and(earlier.ID.lt(JOBS.ID)));
    }

    /**
     * Running jobs among the given ids, in one partition ({@link #SLOT}), that still have one of
     * the given lease ids. Lease ids are unique per claim, so matching the two arrays as sets is
     * matching them pairwise; the ids and the slot let the primary key, {@code (id, slot)}, find
     * the rows.
     */
    private static Condition ownedByAll() {
        return JOBS.ID
                .eq(DSL.any(DSL.param(IDS, SQLDataType.BIGINT.array())))
                .and(inSlot())
                .and(JOBS.STATUS.eq(Sql.RUNNING))
                .and(JOBS.LEASE_ID.eq(DSL.any(DSL.param(LEASE_IDS, SQLDataType.UUID.array()))));
    }

    /**
     * The rows of one partition of {@code jobs}, {@link #SLOT}: a running job stays in the slot
     * its claim read it from ({@link Generations} moves pending jobs only). Naming it does two
     * things. The statement reads one partition (pruned when it is planned with the value, and at
     * executor start-up under a generic plan) instead of probing all of them. And the key
     * {@code (id, slot)} is then given whole, so the planner knows the statement reads one row
     * per id: given the id alone, its estimate grows with the partitions' sizes, and on a table
     * VACUUM had not kept small (autovacuum off, or the horizon held) it chose to AND the key with
     * a bitmap of {@code jobs_lease_expiry_idx}, whose cost grows with the table. On PostgreSQL 15
     * (pgbench, one client, a job enqueued, claimed and completed per transaction, 185,000 dead
     * rows in the partition): the completion took 0.69, then 1.23, then 1.75 ms as dead rows
     * accumulated, and 0.37-0.39 ms throughout with the slot named.
     */
    private static Condition inSlot() {
        return JOBS.SLOT.eq(DSL.param(SLOT, SQLDataType.SMALLINT));
    }
}

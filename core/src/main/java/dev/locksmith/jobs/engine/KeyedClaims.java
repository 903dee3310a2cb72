package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CLAIM_KEYED;
import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;
import static dev.locksmith.codegen.Tables.JOB_KEY_STARTS;

import dev.locksmith.internal.Binds;
import dev.locksmith.internal.Distribution;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.Job;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.jooq.CommonTableExpression;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record1;
import org.jooq.Record5;
import org.jooq.SelectField;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.types.YearToSecond;
import org.jspecify.annotations.Nullable;

/**
 * The claim of jobs that carry a concurrency key, on a queue that has concurrency limits
 * ({@code job_concurrency_limits}); on Citus, shard by shard through {@link KeyedShardClaims}. Its
 * first half is the schema's
 * {@code job_claim_keyed} function, whose description has the exactness argument: it walks the
 * queue's keys with pending jobs in key order, starting after the key where this thread's last
 * walk of the queue ended (so the keys take turns: round robin), locks free slots of each key it visits
 * (transaction-scoped advisory locks), reads the running jobs again with a snapshot taken after
 * those locks, and pairs the free slots with each key's first due jobs in claim order. The
 * statement around it leases the paired jobs, writing each one's slot ({@code key_slot}), or
 * deletes them for a transactional claim, whose slot locks then last its transaction, or holds
 * them for a two-phase claim, writing each one's slot negated. One statement, auto-committed for
 * a leased or two-phase claim. Its result is the claimed jobs' columns
 * ({@link JobStatements#JOB_COLUMNS}), the key the walk ended at and how many slots it lost to
 * other claims, in one more row without a job when nothing was claimed.
 *
 * <p>The other claims leave keyed jobs to this one while the queue has any limit
 * ({@link JobStatements}); whether it has is looked up at most once per
 * {@link #LIMITS_LOOKED_UP_EVERY_NANOS} per queue. <b>Internal: not API.</b>
 */
final class KeyedClaims {

    /** The key after which a walk starts: where this thread's previous walk ended, or none. */
    static final String AFTER = "after";

    /** How long a look at whether a queue has limits holds: a second. */
    private static final long LIMITS_LOOKED_UP_EVERY_NANOS = 1_000_000_000L;

    /**
     * How many times a leased claim that came back empty, having lost slots to other claims, is
     * made again (see {@link #claim}).
     */
    private static final int AGAIN_AT_MOST = 8;

    private final DSLContext dsl;
    /** Rendered claims by limit, negative for those that record the starts of rate-limited keys. */
    private final Map<Integer, RenderedQuery> leased = new ConcurrentHashMap<>();

    private final Map<Integer, RenderedQuery> inTransaction = new ConcurrentHashMap<>();
    private final Map<Integer, RenderedQuery> held = new ConcurrentHashMap<>();
    /** Where the last walk of each queue ended, whichever thread made it. */
    private final Map<String, String> walkedTo = new ConcurrentHashMap<>();
    /**
     * Where this thread's last walk of each queue ended: a thread that claims again resumes its
     * own walk. Threads sharing one place would visit the same keys at once, each claim passing
     * over the keys whose slots the others had just locked, and a place written by whichever
     * claim ended last would put them back in step whenever they drifted apart.
     */
    private final ThreadLocal<Map<String, String>> walkedToHere = ThreadLocal.withInitial(HashMap::new);

    private final Map<String, Looked> limited = new ConcurrentHashMap<>();
    private final RenderedQuery hasLimits;
    /**
     * {@link #hasLimits} on Citus, without the look for jobs without a key: that look reads every
     * shard, and fails while a worker node is down, which would stop every claim of the queue
     * where the claims of the other nodes' shards go on. There the plain claim of each shard runs
     * regardless (one router statement).
     */
    private final RenderedQuery hasLimitsOnCitus;

    private final Distribution distribution;
    private final KeyedShardClaims onShard;

    /**
     * Whether a queue had limits when last looked at, whether it then had pending jobs without a
     * key, whether any of its keys had a rate, and when that was ({@link System#nanoTime}).
     */
    private record Looked(boolean limited, boolean unkeyed, boolean rated, long at) {}

    /**
     * A row of the keyed claim: the job claimed (null in the row that only ends the walk), where
     * the walk ended and how many slots it lost to other claims (in every row).
     */
    record Row(@Nullable Job job, @Nullable String walkedTo, int lost) {}

    KeyedClaims(DSLContext dsl, Distribution distribution) {
        this.dsl = dsl;
        this.distribution = distribution;
        this.onShard = new KeyedShardClaims(dsl);
        Field<String> queue = DSL.param(JobStatements.QUEUE, SQLDataType.VARCHAR);
        // EXISTS as a template rather than DSL.exists(Select): jOOQ 3.21 replaced that method by
        // DSL.exists(TableLike), so code compiled against 3.19 fails to link on 3.21
        // (NoSuchMethodError); DSL.condition(String, QueryPart...) is the same in both.
        Condition limits = DSL.condition(
                "EXISTS ({0})",
                DSL.selectOne().from(JOB_CONCURRENCY_LIMITS).where(JOB_CONCURRENCY_LIMITS.QUEUE.eq(queue)));
        // only where the queue has limits: the plain claim's index holds the keyed jobs too, and
        // this look steps over them to the first job without a key
        Condition unkeyed = DSL.condition(
                "EXISTS ({0})",
                DSL.selectOne()
                        .from(JOBS)
                        .where(JOBS.QUEUE.eq(queue))
                        .and(JOBS.STATUS.eq(Sql.PENDING))
                        .and(JOBS.CONCURRENCY_KEY.isNull())
                        .and(JOBS.RUN_AT.le(Sql.statementTime())));
        Condition rates = DSL.condition(
                "EXISTS ({0})",
                DSL.selectOne()
                        .from(JOB_CONCURRENCY_LIMITS)
                        .where(JOB_CONCURRENCY_LIMITS.QUEUE.eq(queue))
                        .and(JOB_CONCURRENCY_LIMITS.MAX_STARTS.isNotNull()));
        hasLimits = RenderedQuery.of(
                dsl,
                dsl.select(
                        DSL.field(limits),
                        DSL.when(limits, DSL.field(unkeyed)).otherwise(DSL.inline(true)),
                        DSL.field(rates)));
        hasLimitsOnCitus = RenderedQuery.of(dsl, dsl.select(DSL.field(limits), DSL.inline(true), DSL.field(rates)));
    }

    /**
     * Whether {@code queue} has a concurrency limit (a default or a key's), as looked up within
     * the last second on {@code ctx}.
     */
    boolean limited(DSLContext ctx, String queue) {
        return looked(ctx, queue).limited();
    }

    /**
     * Whether {@code queue}, which has limits, had due pending jobs without a concurrency key when
     * looked at within the last second: if not, its claims leave out the plain claim, which would
     * step over every keyed job in its index to find none. A job without a key enqueued since
     * then waits for the next look.
     */
    boolean unkeyed(DSLContext ctx, String queue) {
        return looked(ctx, queue).unkeyed();
    }

    /**
     * Whether some key of {@code queue} had a rate limit when looked at within the last second:
     * if not, its keyed claims leave out the recording of starts (a price every keyed claim would
     * pay), and the function skips keys that have a rate by then, so that a rate set since the look
     * holds back its key's jobs until the next look rather than letting them start unrecorded.
     */
    boolean rated(DSLContext ctx, String queue) {
        return looked(ctx, queue).rated();
    }

    private Looked looked(DSLContext ctx, String queue) {
        long now = System.nanoTime();
        Looked looked = limited.get(queue);
        if (looked == null || now - looked.at() > LIMITS_LOOKED_UP_EVERY_NANOS) {
            RenderedQuery look = distribution.shards(ctx) > 0 ? hasLimitsOnCitus : hasLimits;
            looked = look.fetch(
                            ctx,
                            look.binds().set(JobStatements.QUEUE, queue),
                            row -> new Looked(row.getBoolean(1), row.getBoolean(2), row.getBoolean(3), now))
                    .get(0);
            limited.put(queue, looked);
        }
        return looked;
    }

    /** Forgets what was looked up about {@code queue}'s limits: the next claim looks again. */
    void forget(String queue) {
        limited.remove(queue);
    }

    /**
     * Claims up to {@code limit} keyed jobs with {@code statement} ({@link #statement}) and moves this thread's walk on. With {@code again},
     * a statement that claimed nothing although it lost slots to other claims (their locks held,
     * or, once locked, found taken by a claim that committed after its first look: claims on
     * other threads visit the same keys) is made again, from where it ended, up to
     * {@value #AGAIN_AT_MOST} times: an empty claim sends a worker to wait for its next poll while
     * jobs are due. Each loss means another claim was taking a job. A key that looks full costs no
     * second claim. A transactional claim is not made again: the slot locks of an empty attempt
     * would last its transaction.
     */
    List<Job> claim(
            DSLContext ctx,
            Claim claim,
            int limit,
            RenderedQuery statement,
            boolean again,
            UnaryOperator<Binds> binds,
            RenderedQuery.RowMapper<Job> mapper) {
        List<Integer> shards = List.copyOf(claim.shards());
        RenderedQuery.RowMapper<Row> rowMapper = row -> new Row(
                row.getObject(1) == null ? null : mapper.map(row),
                row.getString(JobStatements.JOB_COLUMNS.size() + 1),
                row.getObject(JobStatements.JOB_COLUMNS.size() + 2) == null
                        ? 0
                        : row.getInt(JobStatements.JOB_COLUMNS.size() + 2));
        return walk(
                claim.queue(),
                again,
                after -> statement.fetch(
                        ctx,
                        binds.apply(statement
                                .binds()
                                .set(JobStatements.QUEUE, claim.queue())
                                .set(AFTER, after)
                                .setInts(JobStatements.SHARDS, shards)),
                        rowMapper));
    }

    /**
     * {@link #claim} of one shard on Citus ({@link KeyedShardClaims}): up to {@code limit} keyed
     * jobs of {@code shard}, leased ({@link Mode#LEASED}, in a transaction of their own) or deleted
     * in {@code ctx}'s transaction ({@link Mode#IN_TRANSACTION}). The walk's place is kept per
     * queue, whichever shard it was on: keys sort the same on every shard.
     */
    List<Job> claimOnShard(
            DSLContext ctx,
            Mode mode,
            String queue,
            int shard,
            int limit,
            boolean again,
            UnaryOperator<Binds> binds,
            RenderedQuery.RowMapper<Job> mapper) {
        boolean rated = rated(ctx, queue);
        return walk(
                queue,
                again,
                after -> onShard.claim(
                        ctx, mode, new KeyedShardClaims.Target(queue, after, shard, limit), rated, binds, mapper));
    }

    /**
     * Makes a keyed claim from where this thread's last walk of {@code queue} ended, again while
     * {@code again} allows and it came back empty having lost slots (see {@link #claim}), moving
     * the walk on after each.
     */
    private List<Job> walk(String queue, boolean again, Function<@Nullable String, List<Row>> attempt) {
        List<Job> jobs = new ArrayList<>();
        Map<String, String> here = walkedToHere.get();
        for (int tries = 0; tries <= (again ? AGAIN_AT_MOST : 0) && jobs.isEmpty(); tries++) {
            List<Row> rows = attempt.apply(here.getOrDefault(queue, walkedTo.get(queue)));
            for (Row row : rows) {
                if (row.job() != null) {
                    jobs.add(row.job());
                }
            }
            if (!rows.isEmpty() && rows.get(0).walkedTo() != null) {
                walkedTo.put(queue, rows.get(0).walkedTo());
                here.put(queue, rows.get(0).walkedTo());
            }
            if (rows.isEmpty() || rows.get(0).lost() == 0) {
                break;
            }
        }
        return jobs;
    }

    /**
     * The keyed claim of up to {@code limit} jobs in {@code mode}; with {@code rated}, the starts
     * of rate-limited keys recorded. Leased: the lease's columns and the slot written. In a
     * transaction: the rows deleted in the caller's transaction. Held, the first step of a
     * two-phase claim, auto-committed as a leased one: each job's attempt and fence counted, its
     * {@code run_at} moved to the end of the hold ({@link JobStatements#HOLD}) and its slot
     * written negated to {@code key_slot}, which the function's looks count as a running job's
     * while the hold lasts (the job stays {@code pending}); the transaction that takes the job
     * takes the slot's lock ({@link TwoPhaseSteps#take}).
     */
    RenderedQuery statement(Mode mode, int limit, boolean rated) {
        Map<Integer, RenderedQuery> cache = switch (mode) {
            case LEASED -> leased;
            case IN_TRANSACTION -> inTransaction;
            case HELD -> held;
        };
        return cache.computeIfAbsent(rated ? -limit : limit, n -> render(limit, mode, rated));
    }

    /** What the statement around the function does to the jobs it pairs with slots. */
    enum Mode {
        /** Leases them ({@code running}), writing each one's slot. */
        LEASED,
        /** Deletes them in the caller's transaction, whose slot locks last it. */
        IN_TRANSACTION,
        /** Holds them for a two-phase claim, writing each one's slot negated. */
        HELD
    }

    /**
     * The starts of the claimed jobs whose keys have a rate, one per job, written to each key's
     * row of {@code job_key_starts} at a time read after the function's locks (which this
     * statement's transaction holds), dropping the starts older than the key's window: the jobs
     * this statement claimed, not every job the function paired (its snapshot is newer than this
     * statement's, which may not claim a job that became due in between). Unreferenced by the
     * query's result, it runs all the same (a data-modifying {@code WITH}).
     */
    private CommonTableExpression<Record1<Integer>> recorded(
            CommonTableExpression<Record> claimed,
            CommonTableExpression<?> pairs,
            Field<Long> pairedId,
            Field<YearToSecond> pairedWindow) {
        Field<Long> claimedId = Objects.requireNonNull(claimed.field(JOBS.ID));
        Field<String> claimedQueue = Objects.requireNonNull(claimed.field(JOBS.QUEUE));
        Field<String> claimedKey = Objects.requireNonNull(claimed.field(JOBS.CONCURRENCY_KEY));
        Field<OffsetDateTime[]> started = DSL.field(
                "array_fill(clock_timestamp(), ARRAY[count(*)::integer])", JOB_KEY_STARTS.STARTS.getDataType());
        // the key's window, from any of its claimed jobs (all carry the same)
        Field<YearToSecond> window = DSL.field(DSL.select(DSL.max(pairedWindow))
                .from(pairs)
                .join(claimed)
                .on(claimedId.eq(pairedId))
                .where(claimedKey.eq(JOB_KEY_STARTS.CONCURRENCY_KEY)));
        Field<OffsetDateTime[]> kept = DSL.field(
                "ARRAY(SELECT t FROM unnest({0}) AS t WHERE t > clock_timestamp() - {1}) || {2}",
                JOB_KEY_STARTS.STARTS.getDataType(),
                JOB_KEY_STARTS.STARTS,
                window,
                DSL.excluded(JOB_KEY_STARTS.STARTS));
        return DSL.name("recorded")
                .as(dsl.insertInto(
                                JOB_KEY_STARTS,
                                JOB_KEY_STARTS.QUEUE,
                                JOB_KEY_STARTS.CONCURRENCY_KEY,
                                JOB_KEY_STARTS.STARTS)
                        .select(DSL.select(claimedQueue, claimedKey, started)
                                .from(claimed)
                                .join(pairs)
                                .on(pairedId.eq(claimedId))
                                .where(pairedWindow.isNotNull())
                                .groupBy(claimedQueue, claimedKey))
                        .onConflict(JOB_KEY_STARTS.QUEUE, JOB_KEY_STARTS.CONCURRENCY_KEY)
                        .doUpdate()
                        .set(JOB_KEY_STARTS.STARTS, kept)
                        .returningResult(DSL.inline(1)));
    }

    private RenderedQuery render(int limit, Mode mode, boolean rated) {
        var called = JOB_CLAIM_KEYED
                .call(
                        DSL.param(JobStatements.QUEUE, SQLDataType.VARCHAR),
                        DSL.param(AFTER, SQLDataType.VARCHAR),
                        DSL.inline(limit),
                        DSL.param(JobStatements.SHARDS, SQLDataType.INTEGER.array()),
                        DSL.inline(rated),
                        DSL.inline(false))
                .as("f");
        // materialized, so that the function runs once, before the rows it names are changed
        CommonTableExpression<Record5<Long, Short, String, YearToSecond, Integer>> pairs = DSL.name("pairs")
                .asMaterialized(
                        DSL.select(called.ID, called.KEY_SLOT, called.WALKED_TO, called.RATE_WINDOW, called.LOST)
                                .from(called));
        Field<Long> pairedId = Objects.requireNonNull(pairs.field(called.ID));
        Field<Short> pairedSlot = Objects.requireNonNull(pairs.field(called.KEY_SLOT));
        Field<String> walked = Objects.requireNonNull(pairs.field(called.WALKED_TO));
        Field<YearToSecond> pairedWindow = Objects.requireNonNull(pairs.field(called.RATE_WINDOW));
        Field<Integer> lost = Objects.requireNonNull(pairs.field(called.LOST));
        // the ids as an array (an init plan), so that the rows are found by primary key, one
        // probe each: joined with the function's rows, whose count the planner cannot know, the
        // update hashed them against a scan of every partition
        Condition paired = JOBS.ID
                .eq(DSL.any(DSL.array(DSL.select(pairedId).from(pairs).where(pairedId.isNotNull()))))
                .and(JOBS.STATUS.eq(Sql.PENDING));
        Field<Short> slotOfJob = DSL.field(DSL.select(pairedSlot).from(pairs).where(pairedId.eq(JOBS.ID)));
        org.jooq.ResultQuery<Record> changed = switch (mode) {
            case LEASED ->
                JobStatements.leased(dsl.update(JOBS), false)
                        .set(JOBS.KEY_SLOT, slotOfJob)
                        .where(paired)
                        .returningResult(JobStatements.JOB_COLUMNS);
            case HELD ->
                JobStatements.held(dsl.update(JOBS))
                        .set(JOBS.KEY_SLOT, slotOfJob.neg())
                        .where(paired)
                        .returningResult(JobStatements.JOB_COLUMNS);
            case IN_TRANSACTION -> dsl.deleteFrom(JOBS).where(paired).returningResult(JobStatements.JOB_COLUMNS);
        };
        CommonTableExpression<Record> claimed = DSL.name("claimed").as(changed);
        CommonTableExpression<Record1<Integer>> recorded = recorded(claimed, pairs, pairedId, pairedWindow);
        List<SelectField<?>> columns = new ArrayList<>();
        JobStatements.JOB_COLUMNS.forEach(column -> columns.add(claimed.field(column.getName())));
        var end = DSL.select(walked, lost).from(pairs).where(pairedId.isNull()).asTable("walk");
        columns.add(end.field(walked.getName()));
        columns.add(end.field(lost.getName()));
        return RenderedQuery.of(
                dsl,
                (rated
                                ? DSL.with(pairs).with(claimed).with(recorded)
                                : DSL.with(pairs).with(claimed))
                        .select(columns)
                        .from(end)
                        .leftJoin(claimed)
                        .on(DSL.trueCondition()));
    }
}

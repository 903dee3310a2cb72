package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CLAIM_KEYED;
import static dev.locksmith.codegen.Tables.JOB_KEY_STARTS;

import dev.locksmith.codegen.Routines;
import dev.locksmith.internal.Binds;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.jobs.Job;
import java.sql.Connection;
import java.sql.Savepoint;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;

/**
 * The keyed claim of one shard on Citus, where the one statement of {@link KeyedClaims} cannot
 * run: Citus sends a statement whose tables all name one shard to that shard's node whole, the
 * function with it, and there the function's own statements would be distributed queries run
 * from a query on a shard, which Citus refuses. So two statements in one transaction. First the
 * function alone, which the coordinator runs ({@code keys_on_shards}: its statements name the
 * shard, each a router statement; a key's jobs all live on its shard, where the library places
 * them, so its running jobs are counted there); its slot locks are the coordinator's advisory
 * locks, which every claim takes (every client connects to the coordinator). Then the lease, or
 * the delete of a transactional claim, of the jobs it paired with slots: one router statement
 * naming the shard, writing each job's slot. The row locks the function took and its slot locks
 * last until the transaction ends: a leased claim's own, committed after the second statement,
 * or the caller's. Citus commits the writes on the worker before the coordinator's commit
 * releases the slot locks (one-phase commit in its pre-commit callback, two-phase in its commit
 * callback, both before PostgreSQL releases locks), so the function's argument of exactness
 * carries over: a claim granted a slot's lock sees the job the lock's previous holder leased.
 * A rate-limited key's starts are its row of {@code job_key_starts} on the key's shard: the claim
 * writes them in a third statement per key, a router statement, at a time the coordinator reads
 * after every lock (under the key's rate lock, which the function took), as the one-server claim
 * does in its one statement. <b>Internal: not API.</b>
 */
final class KeyedShardClaims {

    /** The slots paired with {@link JobStatements#IDS}, in the same order; 0 for a key without a limit. */
    static final String SLOTS = "slots";

    private static final String KEY = "key";
    private static final String STARTED = "started";
    private static final String WINDOW_MICROS = "window_micros";

    private final DSLContext dsl;
    /** The function's call by limit, negative for a call that records the starts of rate-limited keys. */
    private final Map<Integer, RenderedQuery> pairs = new ConcurrentHashMap<>();

    private final RenderedQuery recordStarts;
    /** Whether the claims' connections were found to go to the coordinator (looked at once). */
    private volatile boolean onCoordinator;

    private final RenderedQuery leased;
    private final RenderedQuery inTransaction;

    KeyedShardClaims(DSLContext dsl) {
        this.dsl = dsl;
        Condition paired = JOBS.SHARD
                .eq(DSL.param(JobStatements.SHARD, SQLDataType.INTEGER))
                .and(JOBS.ID.eq(DSL.any(DSL.param(JobStatements.IDS, SQLDataType.BIGINT.array()))))
                .and(JOBS.STATUS.eq(Sql.PENDING));
        // array_position is immutable: Citus refuses volatile functions in an UPDATE of a
        // distributed table
        Field<Short> slot = DSL.field(
                "nullif(({0})[array_position({1}, {2})], 0)::smallint",
                SQLDataType.SMALLINT,
                DSL.param(SLOTS, SQLDataType.INTEGER.array()),
                DSL.param(JobStatements.IDS, SQLDataType.BIGINT.array()),
                JOBS.ID);
        leased = RenderedQuery.of(
                dsl,
                JobStatements.leased(dsl.update(JOBS), true)
                        .set(JOBS.KEY_SLOT, slot)
                        .where(paired)
                        .returningResult(JobStatements.JOB_COLUMNS));
        inTransaction =
                RenderedQuery.of(dsl, dsl.deleteFrom(JOBS).where(paired).returningResult(JobStatements.JOB_COLUMNS));
        // the starts, read from the coordinator's clock (Citus evaluates an insert's values there),
        // added to the key's row, and the row's starts older than the window dropped
        Field<OffsetDateTime[]> started = DSL.field(
                "array_fill(clock_timestamp(), ARRAY[{0}])",
                JOB_KEY_STARTS.STARTS.getDataType(), DSL.param(STARTED, SQLDataType.INTEGER));
        // the window ends at the new starts' time
        Field<OffsetDateTime> newest =
                DSL.field("{0}[1]", SQLDataType.TIMESTAMPWITHTIMEZONE, DSL.excluded(JOB_KEY_STARTS.STARTS));
        recordStarts = RenderedQuery.of(
                dsl,
                dsl.insertInto(
                                JOB_KEY_STARTS,
                                JOB_KEY_STARTS.QUEUE,
                                JOB_KEY_STARTS.CONCURRENCY_KEY,
                                JOB_KEY_STARTS.SHARD,
                                JOB_KEY_STARTS.STARTS)
                        .values(
                                DSL.param(JobStatements.QUEUE, SQLDataType.VARCHAR),
                                DSL.param(KEY, SQLDataType.VARCHAR),
                                DSL.param(JobStatements.SHARD, SQLDataType.INTEGER),
                                started)
                        .onConflict(JOB_KEY_STARTS.QUEUE, JOB_KEY_STARTS.CONCURRENCY_KEY, JOB_KEY_STARTS.SHARD)
                        .doUpdate()
                        .set(
                                JOB_KEY_STARTS.STARTS,
                                DSL.field(
                                        "{0} || {1}",
                                        JOB_KEY_STARTS.STARTS.getDataType(),
                                        Routines.jobStartsKept(
                                                JOB_KEY_STARTS.STARTS,
                                                newest,
                                                DSL.param(WINDOW_MICROS, SQLDataType.BIGINT)),
                                        DSL.excluded(JOB_KEY_STARTS.STARTS)))
                        .returningResult(DSL.inline(1)));
    }

    /**
     * One keyed claim of up to {@code limit} jobs of {@code shard}: leased in a transaction of its
     * own, or deleted in the caller's ({@code ctx}'s) transaction; with {@code rated}, the starts
     * of its rate-limited keys recorded (without, the function skips keys that have a rate). Its
     * rows are the walk's end first (no job), then a row per job claimed.
     *
     * @param binds sets the take's other parameters (the worker and lease of a leased claim)
     */
    List<KeyedClaims.Row> claim(
            DSLContext ctx,
            KeyedClaims.Mode mode,
            Target target,
            boolean rated,
            UnaryOperator<Binds> binds,
            RenderedQuery.RowMapper<Job> mapper) {
        requireCoordinator(ctx);
        return switch (mode) {
            case LEASED -> ctx.transactionResult(c -> steps(c.dsl(), leased, target, rated, binds, mapper));
            case IN_TRANSACTION -> inSavepoint(ctx, () -> steps(ctx, inTransaction, target, rated, binds, mapper));
            case HELD -> throw new UnsupportedOperationException("two-phase claims are not supported on Citus");
        };
    }

    /**
     * Runs one shard's attempt of a transactional claim in a savepoint of the caller's
     * transaction, rolled back when it took no job: the slot and rate locks it took are released
     * with it (advisory locks taken in a subtransaction go with it), rather than held until the
     * caller's transaction ends while the claim goes on to other shards and the handler runs,
     * other claims passing over those slots and keys meanwhile. Kept (released) when it took jobs:
     * their locks are the claim's. A failure leaves the caller's transaction as any failed
     * statement does.
     */
    private static List<KeyedClaims.Row> inSavepoint(DSLContext ctx, Supplier<List<KeyedClaims.Row>> attempt) {
        Savepoint savepoint = ctx.connectionResult(Connection::setSavepoint);
        List<KeyedClaims.Row> rows = attempt.get();
        if (rows.stream().anyMatch(row -> row.job() != null)) {
            ctx.connection(c -> c.releaseSavepoint(savepoint));
        } else {
            ctx.connection(c -> c.rollback(savepoint));
        }
        return rows;
    }

    /**
     * Refuses keyed claims on a connection to a worker node (Citus lets clients connect to any
     * node): the slot and rate locks are advisory locks of the node the function runs on, so only
     * claims that all run on the coordinator take the same locks. One look per queue object.
     */
    private void requireCoordinator(DSLContext ctx) {
        if (onCoordinator) {
            return;
        }
        Boolean coordinator = ctx.fetchValue(DSL.field("citus_is_coordinator()", SQLDataType.BOOLEAN));
        if (!Boolean.TRUE.equals(coordinator)) {
            throw new IllegalStateException("a claim of keyed jobs of a queue with limits on Citus must connect to "
                    + "the coordinator: the slot and rate locks are the coordinator's advisory locks");
        }
        onCoordinator = true;
    }

    /** What one claim of a shard reads: up to {@code limit} jobs of the queue's keys after {@code after}. */
    record Target(String queue, @Nullable String after, int shard, int limit) {}

    /** A job the function paired with a slot: its slot (0: none) and its key's rate window (0: none). */
    private record Paired(long id, int slot, long windowMicros) {}

    private List<KeyedClaims.Row> steps(
            DSLContext ctx,
            RenderedQuery take,
            Target target,
            boolean rated,
            UnaryOperator<Binds> binds,
            RenderedQuery.RowMapper<Job> mapper) {
        RenderedQuery call =
                pairs.computeIfAbsent(rated ? -target.limit() : target.limit(), n -> call(target.limit(), rated));
        List<Paired> paired = new ArrayList<>();
        String[] walked = {null};
        int[] lost = {0};
        call.fetch(
                ctx,
                call.binds()
                        .set(JobStatements.QUEUE, target.queue())
                        .set(KeyedClaims.AFTER, target.after())
                        .setInts(JobStatements.SHARDS, List.of(target.shard())),
                row -> {
                    if (row.getObject(1) == null) {
                        walked[0] = row.getString(3);
                        lost[0] = row.getInt(4);
                    } else {
                        paired.add(new Paired(row.getLong(1), row.getInt(2), row.getLong(5)));
                    }
                    return Boolean.TRUE;
                });
        List<KeyedClaims.Row> rows = new ArrayList<>();
        rows.add(new KeyedClaims.Row(null, walked[0], lost[0]));
        if (paired.isEmpty()) {
            return rows;
        }
        Binds values = binds.apply(take.binds())
                .set(JobStatements.SHARD, target.shard())
                .setLongs(JobStatements.IDS, paired.stream().map(Paired::id).toList());
        if (take.hasParameter(SLOTS)) {
            values.setInts(SLOTS, paired.stream().map(Paired::slot).toList());
        }
        if (take.hasParameter(JobStatements.CLAIM_TOKEN)) {
            values.set(JobStatements.CLAIM_TOKEN, UUID.randomUUID().toString());
        }
        List<Job> taken = take.fetch(ctx, values, mapper);
        for (Job job : taken) {
            rows.add(new KeyedClaims.Row(job, walked[0], lost[0]));
        }
        if (rated) {
            record(ctx, target, paired, taken);
        }
        return rows;
    }

    /**
     * The starts of the jobs {@code taken} whose keys have a rate, one per job, added to each
     * key's row on the shard: the jobs this claim took, not every job the function paired (the
     * take's snapshot is newer, and a paired job may have been taken meanwhile).
     */
    private void record(DSLContext ctx, Target target, List<Paired> paired, List<Job> taken) {
        Map<Long, Long> windows = new HashMap<>();
        paired.forEach(p -> windows.put(p.id(), p.windowMicros()));
        // per key: how many started, and its window (every job of a key carries the same)
        Map<String, long[]> started = new HashMap<>();
        for (Job job : taken) {
            long micros = windows.getOrDefault(job.id(), 0L);
            String key = job.concurrencyKey();
            if (micros > 0 && key != null) {
                long[] counted = started.computeIfAbsent(key, k -> new long[] {0, micros});
                counted[0]++;
            }
        }
        started.forEach((key, counted) -> recordStarts.execute(
                ctx,
                recordStarts
                        .binds()
                        .set(JobStatements.QUEUE, target.queue())
                        .set(KEY, key)
                        .set(JobStatements.SHARD, target.shard())
                        .set(STARTED, (int) counted[0])
                        .set(WINDOW_MICROS, counted[1])));
    }

    /**
     * The function's call for up to {@code limit} jobs of one shard, its keys counted there; with
     * {@code rated}, keys with a rate visited (their starts then recorded by {@link #record}).
     */
    private RenderedQuery call(int limit, boolean rated) {
        var called = JOB_CLAIM_KEYED
                .call(
                        DSL.param(JobStatements.QUEUE, SQLDataType.VARCHAR),
                        DSL.param(KeyedClaims.AFTER, SQLDataType.VARCHAR),
                        DSL.inline(limit),
                        DSL.param(JobStatements.SHARDS, SQLDataType.INTEGER.array()),
                        DSL.inline(rated),
                        DSL.inline(true))
                .as("f");
        Field<Long> windowMicros = DSL.field(
                "coalesce((extract(epoch from {0}) * 1000000)::bigint, 0)", SQLDataType.BIGINT, called.RATE_WINDOW);
        return RenderedQuery.of(
                dsl,
                dsl.select(
                                called.ID,
                                DSL.coalesce(called.KEY_SLOT, DSL.inline((short) 0)),
                                called.WALKED_TO,
                                called.LOST,
                                windowMicros)
                        .from(called));
    }
}

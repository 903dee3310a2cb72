package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CLAIM_KEYED;

import dev.locksmith.internal.Binds;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.jobs.Job;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
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
 * Rate limits are refused on Citus: the function is called without recording starts, and skips
 * keys that have a rate. <b>Internal: not API.</b>
 */
final class KeyedShardClaims {

    /** The slots paired with {@link JobStatements#IDS}, in the same order; 0 for a key without a limit. */
    static final String SLOTS = "slots";

    private final DSLContext dsl;
    /** The function's call by limit. */
    private final Map<Integer, RenderedQuery> pairs = new ConcurrentHashMap<>();

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
                JobStatements.leasedOnShard(dsl.update(JOBS))
                        .set(JOBS.KEY_SLOT, slot)
                        .where(paired)
                        .returningResult(JobStatements.JOB_COLUMNS));
        inTransaction =
                RenderedQuery.of(dsl, dsl.deleteFrom(JOBS).where(paired).returningResult(JobStatements.JOB_COLUMNS));
    }

    /**
     * One keyed claim of up to {@code limit} jobs of {@code shard}: leased in a transaction of its
     * own, or deleted in the caller's ({@code ctx}'s) transaction. Its rows are the walk's end
     * first (no job), then a row per job claimed.
     *
     * @param binds sets the take's other parameters (the worker and lease of a leased claim)
     */
    List<KeyedClaims.Row> claim(
            DSLContext ctx,
            KeyedClaims.Mode mode,
            String queue,
            @Nullable String after,
            int shard,
            int limit,
            UnaryOperator<Binds> binds,
            RenderedQuery.RowMapper<Job> mapper) {
        return switch (mode) {
            case LEASED ->
                ctx.transactionResult(c -> steps(c.dsl(), leased, queue, after, shard, limit, binds, mapper));
            case IN_TRANSACTION -> steps(ctx, inTransaction, queue, after, shard, limit, binds, mapper);
            case HELD -> throw new UnsupportedOperationException("two-phase claims are not supported on Citus");
        };
    }

    private List<KeyedClaims.Row> steps(
            DSLContext ctx,
            RenderedQuery take,
            String queue,
            @Nullable String after,
            int shard,
            int limit,
            UnaryOperator<Binds> binds,
            RenderedQuery.RowMapper<Job> mapper) {
        RenderedQuery call = pairs.computeIfAbsent(limit, this::call);
        List<Long> ids = new ArrayList<>();
        List<Integer> slots = new ArrayList<>();
        String[] walked = {null};
        int[] lost = {0};
        call.fetch(
                ctx,
                call.binds()
                        .set(JobStatements.QUEUE, queue)
                        .set(KeyedClaims.AFTER, after)
                        .setInts(JobStatements.SHARDS, List.of(shard)),
                row -> {
                    if (row.getObject(1) == null) {
                        walked[0] = row.getString(3);
                        lost[0] = row.getInt(4);
                    } else {
                        ids.add(row.getLong(1));
                        slots.add(row.getObject(2) == null ? 0 : row.getInt(2));
                    }
                    return Boolean.TRUE;
                });
        List<KeyedClaims.Row> rows = new ArrayList<>();
        rows.add(new KeyedClaims.Row(null, walked[0], lost[0]));
        if (!ids.isEmpty()) {
            Binds values =
                    binds.apply(take.binds()).set(JobStatements.SHARD, shard).setLongs(JobStatements.IDS, ids);
            if (take.hasParameter(SLOTS)) {
                values.setInts(SLOTS, slots);
            }
            if (take.hasParameter(JobStatements.CLAIM_TOKEN)) {
                values.set(JobStatements.CLAIM_TOKEN, UUID.randomUUID().toString());
            }
            for (Job job : take.fetch(ctx, values, mapper)) {
                rows.add(new KeyedClaims.Row(job, walked[0], lost[0]));
            }
        }
        return rows;
    }

    /** The function's call for up to {@code limit} jobs of one shard, its keys counted there. */
    private RenderedQuery call(int limit) {
        var called = JOB_CLAIM_KEYED
                .call(
                        DSL.param(JobStatements.QUEUE, SQLDataType.VARCHAR),
                        DSL.param(KeyedClaims.AFTER, SQLDataType.VARCHAR),
                        DSL.inline(limit),
                        DSL.param(JobStatements.SHARDS, SQLDataType.INTEGER.array()),
                        DSL.inline(false),
                        DSL.inline(true))
                .as("f");
        return RenderedQuery.of(
                dsl,
                dsl.select(called.ID, called.KEY_SLOT, called.WALKED_TO, called.LOST)
                        .from(called));
    }
}

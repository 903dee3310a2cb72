package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;

import dev.locksmith.internal.Errors;
import dev.locksmith.internal.Texts;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalInt;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * The rows of {@code job_concurrency_limits}: a queue's default limit per concurrency key (the row
 * whose key is empty) and keys' own limits, written in the caller's transaction. Claims read them
 * in the claim itself ({@link KeyedClaims}). <b>Internal: not API.</b>
 */
public final class Limits {

    /** Largest limit: what the table's check allows. */
    public static final int MAX = 10_000;

    /** The key of a queue's default row. */
    private static final String DEFAULT = "";

    private final QueueContext context;

    Limits(QueueContext context) {
        this.context = context;
    }

    /**
     * Writes the limit of {@code key} of {@code queue}, or the queue's default when {@code key}
     * is null.
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue 1 to 128 characters, not blank
     * @param key 1 to 256 characters, not blank; null for the queue's default
     * @param maxRunning 1 to {@link #MAX}
     * @throws IllegalArgumentException for a bad queue, key or limit (nothing written)
     * @throws UnsupportedOperationException on Citus
     */
    public void set(DSLContext tx, String queue, @Nullable String key, int maxRunning) {
        Texts.requireName("queue", queue, 128);
        String stored = stored(key);
        if (maxRunning < 1 || maxRunning > MAX) {
            throw new IllegalArgumentException("maxRunning must be between 1 and " + MAX + ", was " + maxRunning);
        }
        DSLContext ctx = onOneServer(tx);
        Errors.translating(() -> ctx.insertInto(JOB_CONCURRENCY_LIMITS)
                .set(JOB_CONCURRENCY_LIMITS.QUEUE, queue)
                .set(JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY, stored)
                .set(JOB_CONCURRENCY_LIMITS.MAX_RUNNING, maxRunning)
                .onConflict(JOB_CONCURRENCY_LIMITS.QUEUE, JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY)
                .doUpdate()
                .set(JOB_CONCURRENCY_LIMITS.MAX_RUNNING, maxRunning)
                .set(JOB_CONCURRENCY_LIMITS.UPDATED_AT, DSL.currentOffsetDateTime())
                .execute());
        context.keyed.forget(queue);
    }

    /**
     * Removes the limit of {@code key} of {@code queue}, or the queue's default when {@code key}
     * is null.
     *
     * @return whether there was one
     */
    public boolean remove(DSLContext tx, String queue, @Nullable String key) {
        Texts.requireName("queue", queue, 128);
        String stored = stored(key);
        DSLContext ctx = onOneServer(tx);
        int removed = Errors.translating(() -> ctx.deleteFrom(JOB_CONCURRENCY_LIMITS)
                .where(JOB_CONCURRENCY_LIMITS.QUEUE.eq(queue))
                .and(JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY.eq(stored))
                .execute());
        context.keyed.forget(queue);
        return removed > 0;
    }

    /**
     * The limits of {@code queue}.
     *
     * @return the default (empty when none) and each key's own limit, by key
     */
    public Map.Entry<OptionalInt, Map<String, Integer>> read(DSLContext tx, String queue) {
        Texts.requireName("queue", queue, 128);
        DSLContext ctx = context.on(tx);
        OptionalInt fallback = OptionalInt.empty();
        Map<String, Integer> keys = new LinkedHashMap<>();
        for (var row : Errors.translating(
                () -> ctx.select(JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY, JOB_CONCURRENCY_LIMITS.MAX_RUNNING)
                        .from(JOB_CONCURRENCY_LIMITS)
                        .where(JOB_CONCURRENCY_LIMITS.QUEUE.eq(queue))
                        .orderBy(JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY)
                        .fetch())) {
            if (row.value1().equals(DEFAULT)) {
                fallback = OptionalInt.of(row.value2());
            } else {
                keys.put(row.value1(), row.value2());
            }
        }
        return Map.entry(fallback, keys);
    }

    /**
     * How many keys of {@code queue} run as many jobs as their limit (leased jobs: a transactional
     * claim's are not visible to other transactions), and how many due pending jobs those keys
     * hold back, counted up to {@code cap}. One read-only statement: a group over the queue's
     * running keyed jobs (the running index), then a count of the pending jobs of the keys at
     * their limit (the pending keyed index), stopped at {@code cap}; on the queue's own context.
     *
     * @return keys at their limit, and the due pending jobs of those keys (at most {@code cap})
     */
    public Map.Entry<Integer, Integer> heldBack(String queue, int cap) {
        Texts.requireName("queue", queue, 128);
        if (cap < 1 || cap > 1_000_000) {
            throw new IllegalArgumentException("cap must be between 1 and 1000000, was " + cap);
        }
        DSLContext ctx = context.dsl;
        Field<String> q = DSL.val(queue);
        var limits = JOB_CONCURRENCY_LIMITS.as("own");
        var fallback = JOB_CONCURRENCY_LIMITS.as("fallback");
        Field<Integer> limitOfKey = DSL.coalesce(
                DSL.field(DSL.select(limits.MAX_RUNNING)
                        .from(limits)
                        .where(limits.QUEUE.eq(q))
                        .and(limits.CONCURRENCY_KEY.eq(JOBS.CONCURRENCY_KEY))),
                DSL.field(DSL.select(fallback.MAX_RUNNING)
                        .from(fallback)
                        .where(fallback.QUEUE.eq(q))
                        .and(fallback.CONCURRENCY_KEY.eq(DSL.inline(DEFAULT)))));
        var atLimit = DSL.name("at_limit")
                .as(DSL.select(JOBS.CONCURRENCY_KEY)
                        .from(JOBS)
                        .where(JOBS.QUEUE.eq(q))
                        .and(JOBS.STATUS.eq(Sql.RUNNING))
                        .and(JOBS.CONCURRENCY_KEY.isNotNull())
                        .groupBy(JOBS.CONCURRENCY_KEY)
                        .having(DSL.count().ge(limitOfKey)));
        Field<String> key = atLimit.field(JOBS.CONCURRENCY_KEY);
        var row = Errors.translating(() -> ctx.with(atLimit)
                .select(
                        DSL.field(DSL.selectCount().from(atLimit)),
                        DSL.field(DSL.selectCount()
                                .from(DSL.select(DSL.inline(1))
                                        .from(JOBS)
                                        .where(JOBS.QUEUE.eq(q))
                                        .and(JOBS.STATUS.eq(Sql.PENDING))
                                        .and(JOBS.CONCURRENCY_KEY.in(
                                                DSL.select(key).from(atLimit)))
                                        .and(JOBS.RUN_AT.le(Sql.statementTime()))
                                        .limit(DSL.val(cap)))))
                .fetchSingle());
        return Map.entry(row.value1(), row.value2());
    }

    private static String stored(@Nullable String key) {
        if (key == null) {
            return DEFAULT;
        }
        Texts.requireName("concurrencyKey", key, 256);
        return key;
    }

    private DSLContext onOneServer(DSLContext tx) {
        DSLContext ctx = context.on(tx);
        if (context.shards(ctx) > 0) {
            throw new UnsupportedOperationException(
                    "concurrency limits are not supported on Citus yet: the keyed claim reads a key's jobs across shards");
        }
        return ctx;
    }
}

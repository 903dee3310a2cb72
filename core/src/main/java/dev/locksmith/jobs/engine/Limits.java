package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;
import static dev.locksmith.codegen.Tables.JOB_KEY_STARTS;

import dev.locksmith.internal.Errors;
import dev.locksmith.internal.Texts;
import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.RateLimits;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.jooq.CommonTableExpression;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record1;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;

/**
 * The rows of {@code job_concurrency_limits}: a queue's defaults per concurrency key (the row whose
 * key is empty) and keys' own limits, each row a limit of running jobs, a rate limit of starts, or
 * both (a key's own value of each kind overrides the default of that kind), written in the
 * caller's transaction. Claims read them in the claim itself ({@link KeyedClaims}). <b>Internal:
 * not API.</b>
 */
public final class Limits {

    /** Largest limit: what the table's check allows. */
    public static final int MAX = 10_000;

    /** Largest number of starts per window: what the table's check allows. */
    public static final int MAX_STARTS = 10_000;

    /** Shortest window of a rate limit: what the table's check allows. */
    public static final Duration SHORTEST_WINDOW = Duration.ofMillis(1);

    /** Longest window of a rate limit: what the table's check allows. */
    public static final Duration LONGEST_WINDOW = Duration.ofDays(1);

    /** Most keys {@link #heldBackByKey} lists. */
    public static final int MAX_KEYS_LISTED = 100;

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
     */
    public void set(DSLContext tx, String queue, @Nullable String key, int maxRunning) {
        Texts.requireName("queue", queue, 128);
        String stored = stored(key);
        if (maxRunning < 1 || maxRunning > MAX) {
            throw new IllegalArgumentException("maxRunning must be between 1 and " + MAX + ", was " + maxRunning);
        }
        Map<Field<?>, Object> values = new LinkedHashMap<>();
        values.put(JOB_CONCURRENCY_LIMITS.MAX_RUNNING, maxRunning);
        upsert(tx, queue, stored, values);
    }

    /**
     * Removes the limit of {@code key} of {@code queue}, or the queue's default when {@code key}
     * is null.
     *
     * @return whether there was one
     */
    public boolean remove(DSLContext tx, String queue, @Nullable String key) {
        return clear(tx, queue, key, JOB_CONCURRENCY_LIMITS.MAX_RUNNING);
    }

    /**
     * Writes the rate limit of {@code key} of {@code queue} (at most {@code maxStarts} starts in
     * any {@code per}), or the queue's default when {@code key} is null.
     *
     * @throws IllegalArgumentException for a bad queue, key, count or window (nothing written)
     */
    public void setRate(DSLContext tx, String queue, @Nullable String key, int maxStarts, Duration per) {
        Texts.requireName("queue", queue, 128);
        String stored = stored(key);
        if (maxStarts < 1 || maxStarts > MAX_STARTS) {
            throw new IllegalArgumentException("maxStarts must be between 1 and " + MAX_STARTS + ", was " + maxStarts);
        }
        Objects.requireNonNull(per, "per");
        if (per.compareTo(SHORTEST_WINDOW) < 0 || per.compareTo(LONGEST_WINDOW) > 0 || per.toNanos() % 1_000 != 0) {
            throw new IllegalArgumentException("per must be between 1 ms and 1 day, in whole microseconds, was " + per);
        }
        // in this order, so that the statement's text is the same in every JVM
        Map<Field<?>, Object> values = new LinkedHashMap<>();
        values.put(JOB_CONCURRENCY_LIMITS.MAX_STARTS, maxStarts);
        values.put(JOB_CONCURRENCY_LIMITS.WINDOW_MICROS, per.toNanos() / 1_000);
        upsert(tx, queue, stored, values);
    }

    /**
     * Writes {@code values} into the row of {@code stored} of {@code queue}, inserted if missing,
     * leaving its other kind of limit as it is.
     */
    private void upsert(DSLContext tx, String queue, String stored, Map<Field<?>, Object> values) {
        DSLContext ctx = context.on(tx);
        Errors.translating(() -> ctx.insertInto(JOB_CONCURRENCY_LIMITS)
                .set(JOB_CONCURRENCY_LIMITS.QUEUE, queue)
                .set(JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY, stored)
                .set(values)
                .onConflict(JOB_CONCURRENCY_LIMITS.QUEUE, JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY)
                .doUpdate()
                .set(values)
                // the inserted row's default, now(): Citus refuses functions in DO UPDATE SET
                // (the limits are a reference table there) unless they are immutable
                .set(JOB_CONCURRENCY_LIMITS.UPDATED_AT, DSL.excluded(JOB_CONCURRENCY_LIMITS.UPDATED_AT))
                .execute());
        context.keyed.forget(queue);
    }

    /**
     * Removes the rate limit of {@code key} of {@code queue}, or the queue's default when
     * {@code key} is null.
     *
     * @return whether there was one
     */
    public boolean removeRate(DSLContext tx, String queue, @Nullable String key) {
        return clear(tx, queue, key, JOB_CONCURRENCY_LIMITS.MAX_STARTS);
    }

    /**
     * Clears one kind of limit of a row ({@code own}, with the rate's window when it is the
     * rate), then deletes the row if it holds no limit any more. Two statements in the caller's
     * transaction: two removals of a row's two kinds at once each clear their own (the second
     * waits for the first's row lock), and the later one deletes the row.
     */
    private boolean clear(DSLContext tx, String queue, @Nullable String key, Field<Integer> own) {
        Texts.requireName("queue", queue, 128);
        String stored = stored(key);
        DSLContext ctx = context.on(tx);
        Condition row = JOB_CONCURRENCY_LIMITS.QUEUE.eq(queue).and(JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY.eq(stored));
        var cleared = ctx.update(JOB_CONCURRENCY_LIMITS).set(own, DSL.inline((Integer) null));
        if (own.equals(JOB_CONCURRENCY_LIMITS.MAX_STARTS)) {
            cleared = cleared.set(JOB_CONCURRENCY_LIMITS.WINDOW_MICROS, DSL.inline((Long) null));
        }
        var update = cleared.set(JOB_CONCURRENCY_LIMITS.UPDATED_AT, DSL.currentOffsetDateTime());
        int removed =
                Errors.translating(() -> update.where(row).and(own.isNotNull()).execute());
        Errors.translating(() -> ctx.deleteFrom(JOB_CONCURRENCY_LIMITS)
                .where(row)
                .and(JOB_CONCURRENCY_LIMITS.MAX_RUNNING.isNull())
                .and(JOB_CONCURRENCY_LIMITS.MAX_STARTS.isNull())
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
                        .and(JOB_CONCURRENCY_LIMITS.MAX_RUNNING.isNotNull())
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
     * The rate limits of {@code queue}.
     *
     * @return the default (empty when none) and each key's own rate limit, by key
     */
    public Map.Entry<Optional<RateLimits.Rate>, Map<String, RateLimits.Rate>> readRates(DSLContext tx, String queue) {
        Texts.requireName("queue", queue, 128);
        DSLContext ctx = context.on(tx);
        Optional<RateLimits.Rate> fallback = Optional.empty();
        Map<String, RateLimits.Rate> keys = new LinkedHashMap<>();
        for (var row : Errors.translating(() -> ctx.select(
                        JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY,
                        JOB_CONCURRENCY_LIMITS.MAX_STARTS,
                        JOB_CONCURRENCY_LIMITS.WINDOW_MICROS)
                .from(JOB_CONCURRENCY_LIMITS)
                .where(JOB_CONCURRENCY_LIMITS.QUEUE.eq(queue))
                .and(JOB_CONCURRENCY_LIMITS.MAX_STARTS.isNotNull())
                .orderBy(JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY)
                .fetch())) {
            RateLimits.Rate rate = new RateLimits.Rate(row.value2(), Duration.of(row.value3(), ChronoUnit.MICROS));
            if (row.value1().equals(DEFAULT)) {
                fallback = Optional.of(rate);
            } else {
                keys.put(row.value1(), rate);
            }
        }
        return Map.entry(fallback, keys);
    }

    /**
     * How many keys of {@code queue} are at a limit: they run as many jobs as their concurrency
     * limit (leased jobs and jobs a two-phase claim holds: a transactional claim's are not visible
     * to other transactions), or
     * their window holds as many starts as their rate; and how many due pending jobs those keys
     * hold back, counted up to {@code cap}. One read-only statement: a group over the queue's
     * running keyed jobs (the running index) and a pass over the queue's rows of starts (one per
     * key that had a rate), then a count of the pending jobs of the keys at a limit (the pending
     * keyed index), stopped at {@code cap}; on the queue's own context.
     *
     * @return keys at their limit, and the due pending jobs of those keys (at most {@code cap})
     */
    public Map.Entry<Integer, Integer> heldBack(String queue, int cap) {
        Texts.requireName("queue", queue, 128);
        requireCap(cap);
        Field<String> q = DSL.val(queue);
        var atLimit = atLimit(q, null);
        Field<String> key = atLimit.field(JOBS.CONCURRENCY_KEY);
        var row = Errors.translating(() -> context.dsl
                .with(atLimit)
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

    /**
     * The keys of {@code queue} at a limit (as {@link #heldBack}), at most {@code keys} of them,
     * those holding back the most due pending jobs first (ties by key), each with its running
     * (leased) jobs and its due pending jobs counted up to {@code cap}. One read-only statement:
     * the keys at a limit as in {@link #heldBack}, then per key at a limit one range of the pending
     * keyed index stopped at {@code cap}, a sort of those keys, and per key kept a count of its
     * running jobs (the running keyed index; they number about its limit); on the queue's own
     * context.
     *
     * @param keys 1 to {@link #MAX_KEYS_LISTED}
     * @return the keys, most held back first
     */
    public List<ConcurrencyLimits.KeyHeldBack> heldBackByKey(String queue, int keys, int cap) {
        Texts.requireName("queue", queue, 128);
        if (keys < 1 || keys > MAX_KEYS_LISTED) {
            throw new IllegalArgumentException("keys must be between 1 and " + MAX_KEYS_LISTED + ", was " + keys);
        }
        requireCap(cap);
        if (context.distribution.known() <= 0) {
            try {
                return heldBackByKey(queue, keys, cap, null);
            } catch (RuntimeException e) {
                if (!context.refusedByCitus(e)) {
                    throw e;
                }
            }
        }
        // On Citus the statement's subqueries, correlated with each key, would read every shard,
        // which Citus refuses: one statement per shard instead, each a router statement (a key's
        // jobs share its shard; a key given several shards has its rows added up). The first call
        // there also costs the refused statement and the look at the layout.
        int shards = context.shards(context.dsl);
        List<ConcurrencyLimits.KeyHeldBack> all = new ArrayList<>();
        for (int shard = 0; shard < shards; shard++) {
            all.addAll(heldBackByKey(queue, keys, cap, shard));
        }
        // a key given several shards: its rows added up
        Map<String, ConcurrencyLimits.KeyHeldBack> byKey = new LinkedHashMap<>();
        for (ConcurrencyLimits.KeyHeldBack row : all) {
            byKey.merge(
                    row.concurrencyKey(),
                    row,
                    (a, b) -> new ConcurrencyLimits.KeyHeldBack(
                            a.concurrencyKey(),
                            a.running() + b.running(),
                            Math.min(cap, a.jobsHeldBack() + b.jobsHeldBack())));
        }
        return byKey.values().stream()
                .sorted(Comparator.comparingInt(ConcurrencyLimits.KeyHeldBack::jobsHeldBack)
                        .reversed()
                        .thenComparing(ConcurrencyLimits.KeyHeldBack::concurrencyKey))
                .limit(keys)
                .toList();
    }

    /** {@link #heldBackByKey(String, int, int)} of the keys of one shard, or of every key when null. */
    private List<ConcurrencyLimits.KeyHeldBack> heldBackByKey(
            String queue, int keys, int cap, @Nullable Integer shard) {
        Field<String> q = DSL.val(queue);
        var atLimit = atLimit(q, shard);
        Condition of = shard == null ? DSL.noCondition() : JOBS.SHARD.eq(DSL.val(shard));
        Field<String> key = atLimit.field(JOBS.CONCURRENCY_KEY);
        Field<Integer> running = DSL.field(DSL.selectCount()
                        .from(JOBS)
                        .where(of)
                        .and(JOBS.QUEUE.eq(q))
                        .and(inASlot())
                        .and(JOBS.CONCURRENCY_KEY.eq(key)))
                .as("running");
        Field<Integer> held = DSL.field(DSL.selectCount()
                        .from(DSL.select(DSL.inline(1))
                                .from(JOBS)
                                .where(of)
                                .and(JOBS.QUEUE.eq(q))
                                .and(JOBS.STATUS.eq(Sql.PENDING))
                                .and(JOBS.CONCURRENCY_KEY.eq(key))
                                .and(JOBS.RUN_AT.le(Sql.statementTime()))
                                .limit(DSL.val(cap))))
                .as("held_back");
        return Errors.translating(() -> context.dsl
                .with(atLimit)
                .select(key, running, held)
                .from(atLimit)
                .orderBy(held.desc(), key)
                .limit(DSL.val(keys))
                .fetch(row -> new ConcurrencyLimits.KeyHeldBack(row.value1(), row.value2(), row.value3())));
    }

    /**
     * The CTE {@code at_limit} of {@code queue}'s keys at a limit: a group over the queue's running
     * keyed jobs ({@link #inASlot}: the running index) keeping the keys whose count reaches their
     * concurrency limit (the key's own, else the queue's default, joined to the groups: Citus
     * refuses a subquery in {@code HAVING} that refers to the group), and a pass over the queue's rows of starts (one per key that had a rate) keeping the keys whose
     * window holds as many starts as their rate. Only the keys of {@code shard} when it is given (on
     * Citus, where a key's jobs and starts live on its shard).
     */
    private static CommonTableExpression<Record1<String>> atLimit(Field<String> q, @Nullable Integer shard) {
        Condition of = shard == null ? DSL.noCondition() : JOBS.SHARD.eq(DSL.val(shard));
        var own = JOB_CONCURRENCY_LIMITS.as("own");
        var fallback = JOB_CONCURRENCY_LIMITS.as("fallback");
        Field<Integer> n = DSL.count().as("n");
        var running = DSL.select(JOBS.CONCURRENCY_KEY, n)
                .from(JOBS)
                .where(of)
                .and(JOBS.QUEUE.eq(q))
                .and(inASlot())
                .and(JOBS.CONCURRENCY_KEY.isNotNull())
                .groupBy(JOBS.CONCURRENCY_KEY)
                .asTable("running");
        Field<String> runningKey = Objects.requireNonNull(running.field(JOBS.CONCURRENCY_KEY));
        Field<Integer> count = Objects.requireNonNull(running.field(n));
        var full = DSL.select(runningKey)
                .from(running)
                .leftJoin(own)
                .on(own.QUEUE.eq(q))
                .and(own.CONCURRENCY_KEY.eq(runningKey))
                .leftJoin(fallback)
                .on(fallback.QUEUE.eq(q))
                .and(fallback.CONCURRENCY_KEY.eq(DSL.inline(DEFAULT)))
                .where(count.ge(DSL.coalesce(own.MAX_RUNNING, fallback.MAX_RUNNING)));
        // the rate that applies to a key's row of starts: its own, else the queue's default (any
        // key sorts after the default's empty one)
        var limits = JOB_CONCURRENCY_LIMITS.as("rate");
        var rate = DSL.lateral(DSL.select(limits.MAX_STARTS, limits.WINDOW_MICROS)
                        .from(limits)
                        .where(limits.QUEUE.eq(JOB_KEY_STARTS.QUEUE))
                        .and(limits.CONCURRENCY_KEY.in(JOB_KEY_STARTS.CONCURRENCY_KEY, DSL.inline(DEFAULT)))
                        .and(limits.MAX_STARTS.isNotNull())
                        .orderBy(limits.CONCURRENCY_KEY.desc())
                        .limit(DSL.inline(1)))
                .as("applies");
        var starts = DSL.unnest(JOB_KEY_STARTS.STARTS).as("s", "at");
        Field<OffsetDateTime> at = Objects.requireNonNull(starts.field("at", OffsetDateTime.class));
        Field<Integer> inWindow = DSL.field(DSL.selectCount()
                .from(starts)
                .where(at.gt(DSL.field(
                        "clock_timestamp() - {0} * interval '1 microsecond'",
                        SQLDataType.TIMESTAMPWITHTIMEZONE, rate.field(limits.WINDOW_MICROS)))));
        return DSL.name("at_limit")
                .as(full.union(DSL.select(JOB_KEY_STARTS.CONCURRENCY_KEY)
                        .from(JOB_KEY_STARTS)
                        .crossJoin(rate)
                        .where(shard == null ? DSL.noCondition() : JOB_KEY_STARTS.SHARD.eq(DSL.val(shard)))
                        .and(JOB_KEY_STARTS.QUEUE.eq(q))
                        .and(inWindow.ge(rate.field(limits.MAX_STARTS)))));
    }

    /**
     * A job that runs as the limits count it: {@code running} (leased), or held by a two-phase
     * claim in a slot of its key until its hold ends ({@code key_slot} negated while it is
     * {@code pending}): a range of the partial index of such jobs.
     */
    private static Condition inASlot() {
        return JOBS.STATUS
                .eq(Sql.RUNNING)
                .or(JOBS.STATUS
                        .eq(Sql.PENDING)
                        // inline: with a bound value a generic plan could not use the partial index
                        .and(JOBS.KEY_SLOT.lt(DSL.inline((short) 0)))
                        .and(JOBS.RUN_AT.gt(Sql.statementTime())));
    }

    private static void requireCap(int cap) {
        if (cap < 1 || cap > 1_000_000) {
            throw new IllegalArgumentException("cap must be between 1 and 1000000, was " + cap);
        }
    }

    private static String stored(@Nullable String key) {
        if (key == null) {
            return DEFAULT;
        }
        Texts.requireName("concurrencyKey", key, 256);
        return key;
    }
}

package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;

import dev.locksmith.internal.RenderedQuery;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Param;
import org.jooq.Record1;
import org.jooq.Select;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The pool's hot statements (acquire, release, extend), written in the DSL and rendered once per
 * {@link ChannelAccountPool} (see {@link RenderedQuery} for why). Every one returns rows (release
 * the released key, for its count): see {@link RenderedQuery#execute}.
 */
final class PoolStatements {

    static final String OWNER = "owner";
    static final String LEASE = "lease";
    static final String START = "start";
    static final String PROBES = "probes";

    /** Random slots {@link AcquireStrategy#RANDOM_PROBES} looks at before it falls back to a scan. */
    static final int PROBE_COUNT = 8;

    static final String KEY = "public_key";
    static final String BUCKET = "bucket";

    /** Citus's set: every statement names one bucket ({@code :bucket}), the table's distribution column. */
    final boolean distributed;

    final RenderedQuery acquire;
    final RenderedQuery release;
    final RenderedQuery extend;

    PoolStatements(DSLContext dsl, AcquireStrategy strategy, boolean distributed) {
        this.distributed = distributed;
        Condition inBucket =
                distributed ? CHANNEL_ACCOUNTS.BUCKET.eq(DSL.param(BUCKET, SQLDataType.INTEGER)) : DSL.noCondition();
        Param<String> owner = DSL.param(OWNER, SQLDataType.VARCHAR);
        Field<OffsetDateTime> leaseEnd =
                DSL.currentOffsetDateTime().plus(DSL.param(LEASE, SQLDataType.INTERVALDAYTOSECOND));
        Select<Record1<String>> pick = switch (strategy) {
            case RANDOM_PROBES -> randomProbes(inBucket);
            case RANDOM_START ->
                DSL.selectFrom(randomStartBranches(inBucket).asTable("candidates"))
                        .limit(DSL.inline(1));
            case ORDER_BY_RANDOM -> orderByRandom(inBucket, distributed);
        };
        // Citus refuses volatile functions in an UPDATE of a distributed table: there the lease
        // checks use statement_timestamp(), the time the statement arrived (see heldBy)
        Field<OffsetDateTime> clock = distributed ? statementTimestamp() : clockTimestamp();
        acquire = RenderedQuery.of(
                dsl,
                dsl.update(CHANNEL_ACCOUNTS)
                        .set(CHANNEL_ACCOUNTS.LOCKED_BY, owner)
                        .set(CHANNEL_ACCOUNTS.LOCKED_AT, DSL.currentOffsetDateTime())
                        .set(CHANNEL_ACCOUNTS.LOCKED_UNTIL, leaseEnd)
                        .set(CHANNEL_ACCOUNTS.FENCE, CHANNEL_ACCOUNTS.FENCE.plus(DSL.inline(1L)))
                        .set(CHANNEL_ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(CHANNEL_ACCOUNTS.PUBLIC_KEY.eq(pick.<String>asField()))
                        .and(inBucket)
                        .returning(
                                CHANNEL_ACCOUNTS.PUBLIC_KEY,
                                CHANNEL_ACCOUNTS.LOCKED_BY,
                                CHANNEL_ACCOUNTS.LOCKED_AT,
                                CHANNEL_ACCOUNTS.LOCKED_UNTIL,
                                CHANNEL_ACCOUNTS.FENCE));
        release = RenderedQuery.of(
                dsl,
                dsl.update(CHANNEL_ACCOUNTS)
                        .set(CHANNEL_ACCOUNTS.LOCKED_BY, DSL.castNull(SQLDataType.VARCHAR))
                        .set(CHANNEL_ACCOUNTS.LOCKED_AT, DSL.castNull(SQLDataType.TIMESTAMPWITHTIMEZONE))
                        .set(CHANNEL_ACCOUNTS.LOCKED_UNTIL, DSL.castNull(SQLDataType.TIMESTAMPWITHTIMEZONE))
                        .set(CHANNEL_ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(heldBy(owner, clock))
                        .and(inBucket)
                        .returning(CHANNEL_ACCOUNTS.PUBLIC_KEY));
        // clock_timestamp(), not now(): in a caller's long transaction now() is when it began, and
        // greatest(): an extension never shortens the lease already held.
        extend = RenderedQuery.of(
                dsl,
                dsl.update(CHANNEL_ACCOUNTS)
                        .set(
                                CHANNEL_ACCOUNTS.LOCKED_UNTIL,
                                DSL.greatest(
                                        CHANNEL_ACCOUNTS.LOCKED_UNTIL,
                                        clock.plus(DSL.param(LEASE, SQLDataType.INTERVALDAYTOSECOND))))
                        .set(CHANNEL_ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(heldBy(owner, clock))
                        .and(inBucket)
                        .returning(CHANNEL_ACCOUNTS.LOCKED_UNTIL));
    }

    /**
     * The spreading pick: {@link #PROBE_COUNT} uniformly random slots (from {@code :probes}, uniform
     * values in [0, 1), each mapped to {@code min(slot) + floor(u * (max(slot) - min(slot) + 1))}),
     * looked up by the slot index; of those that are acquirable and not locked, the one least
     * recently leased or released ({@code updated_at}), ties in probe order. Choosing the less
     * used of several random candidates spreads acquisitions more evenly than one random choice
     * ("power of d choices"), and a slot that no account holds (a gap left by removals) is a miss,
     * not a shortcut to its neighbour. Only when every probe misses does it fall back to the
     * {@link #randomStartBranches(Condition) scan from a random start}.
     */
    @SuppressWarnings("NullAway") // probes.field("u") is not null: the alias list above declares u
    private static Select<Record1<String>> randomProbes(Condition inBucket) {
        Table<?> probes = DSL.unnest(DSL.param(PROBES, SQLDataType.DOUBLE.array()))
                .withOrdinality()
                .as("probes", "u", "ord");
        Field<Double> u = probes.field("u", Double.class);
        Field<Long> slot = slotAt(u, inBucket);
        Table<Record1<String>> probed = DSL.select(CHANNEL_ACCOUNTS.PUBLIC_KEY)
                .from(probes)
                .join(CHANNEL_ACCOUNTS)
                .on(CHANNEL_ACCOUNTS.SLOT.eq(slot))
                .where(ChannelAccountPool.acquirable())
                .and(inBucket)
                .orderBy(CHANNEL_ACCOUNTS.UPDATED_AT, probes.field("ord"))
                .limit(DSL.inline(1))
                .forUpdate()
                .of(CHANNEL_ACCOUNTS)
                .skipLocked()
                .asTable("probed");
        Table<Record1<String>> candidates =
                DSL.selectFrom(probed).unionAll(randomStartBranches(inBucket)).asTable("candidates");
        return DSL.selectFrom(candidates).limit(DSL.inline(1));
    }

    /**
     * The scan from a random start: idle slots from {@code :start}, then idle slots before it, then
     * the oldest expired lease; each branch is an index scan with LIMIT 1 and SKIP LOCKED, and
     * the outer LIMIT 1 stops at the first branch that yields a row. The start is
     * {@code min(slot) + floor(:start * (max(slot) - min(slot) + 1))} for a uniform
     * {@code :start} in [0, 1), two index probes. Constant cost, but the account right after a
     * run of leased or missing slots is proportionally more likely.
     */
    private static Select<Record1<String>> randomStartBranches(Condition inBucket) {
        var slot = CHANNEL_ACCOUNTS.SLOT;
        Field<Long> start = slotAt(DSL.param(START, SQLDataType.DOUBLE), inBucket);
        Table<Record1<String>> after = lockOne(
                CHANNEL_ACCOUNTS.LOCKED_UNTIL.isNull().and(slot.ge(start)).and(inBucket), slot, "after");
        Table<Record1<String>> before = lockOne(
                CHANNEL_ACCOUNTS.LOCKED_UNTIL.isNull().and(slot.lt(start)).and(inBucket), slot, "before");
        Table<Record1<String>> expired = lockOne(
                CHANNEL_ACCOUNTS.LOCKED_UNTIL.lt(DSL.currentOffsetDateTime()).and(inBucket),
                CHANNEL_ACCOUNTS.LOCKED_UNTIL,
                "expired");
        return DSL.selectFrom(after).unionAll(DSL.selectFrom(before)).unionAll(DSL.selectFrom(expired));
    }

    /** The slot a uniform {@code u} in [0, 1) falls on: {@code min + floor(u * (max - min + 1))}. */
    private static Field<Long> slotAt(Field<Double> u, Condition inBucket) {
        var slot = CHANNEL_ACCOUNTS.SLOT;
        Field<Long> lo =
                DSL.select(DSL.min(slot)).from(CHANNEL_ACCOUNTS).where(inBucket).asField();
        Field<Long> hi =
                DSL.select(DSL.max(slot)).from(CHANNEL_ACCOUNTS).where(inBucket).asField();
        return lo.plus(DSL.floor(u.times(hi.minus(lo).plus(DSL.inline(1L)))).cast(Long.class));
    }

    /** One row matching {@code where}, first by {@code order}, locked with SKIP LOCKED, as a derived table. */
    private static Table<Record1<String>> lockOne(Condition where, Field<?> order, String alias) {
        // Each branch is its own derived table: jOOQ would otherwise hoist the first branch's
        // FOR UPDATE onto the whole UNION, which PostgreSQL rejects. LIMIT is a literal, so that
        // a generic plan still knows it reads one row.
        return DSL.select(CHANNEL_ACCOUNTS.PUBLIC_KEY)
                .from(CHANNEL_ACCOUNTS)
                .where(where)
                .orderBy(order)
                .limit(DSL.inline(1))
                .forUpdate()
                .skipLocked()
                .asTable(alias);
    }

    /**
     * {@code ORDER BY random()}; on Citus, where a volatile function turns the pick into a
     * separate distributed subplan, by {@code md5(:start || public_key)} instead: a fresh random
     * order per call from the {@code :start} bound, and an immutable expression, so the statement
     * stays one router query.
     */
    private static Select<Record1<String>> orderByRandom(Condition inBucket, boolean distributed) {
        Field<?> order = distributed
                ? DSL.md5(DSL.param(START, SQLDataType.DOUBLE)
                        .cast(SQLDataType.VARCHAR)
                        .concat(CHANNEL_ACCOUNTS.PUBLIC_KEY))
                : DSL.rand();
        return DSL.select(CHANNEL_ACCOUNTS.PUBLIC_KEY)
                .from(CHANNEL_ACCOUNTS)
                .where(ChannelAccountPool.acquirable())
                .and(inBucket)
                .orderBy(order)
                .limit(DSL.inline(1))
                .forUpdate()
                .skipLocked();
    }

    /**
     * Held by {@code owner} and not expired. Compared with {@code clock_timestamp()}, not
     * {@code now()}: inside a long caller transaction {@code now()} is when it began, and a lease
     * that expired since must not be released as if it were still held.
     */
    private static Condition heldBy(Param<String> owner, Field<OffsetDateTime> clock) {
        return CHANNEL_ACCOUNTS
                .PUBLIC_KEY
                .eq(DSL.param(KEY, SQLDataType.VARCHAR))
                .and(CHANNEL_ACCOUNTS.LOCKED_BY.eq(owner))
                .and(CHANNEL_ACCOUNTS.LOCKED_UNTIL.gt(clock));
    }

    /**
     * When the statement arrived (stable, so Citus accepts it in an UPDATE). Unlike
     * {@code clock_timestamp()} it does not move while the statement waits for a row lock: a lease
     * that ran out during such a wait still counts as held by its owner (no one else can have
     * taken it meanwhile: acquisition skips locked rows, and the owner is compared).
     */
    private static Field<OffsetDateTime> statementTimestamp() {
        return DSL.function("statement_timestamp", SQLDataType.TIMESTAMPWITHTIMEZONE);
    }

    private static Field<OffsetDateTime> clockTimestamp() {
        return DSL.function("clock_timestamp", SQLDataType.TIMESTAMPWITHTIMEZONE);
    }

    /** Maps a row returned by {@link #acquire}. */
    static ChannelAccount account(ResultSet row) throws SQLException {
        return new ChannelAccount(
                row.getString(CHANNEL_ACCOUNTS.PUBLIC_KEY.getName()),
                row.getString(CHANNEL_ACCOUNTS.LOCKED_BY.getName()),
                row.getObject(CHANNEL_ACCOUNTS.LOCKED_AT.getName(), OffsetDateTime.class),
                row.getObject(CHANNEL_ACCOUNTS.LOCKED_UNTIL.getName(), OffsetDateTime.class),
                row.getLong(CHANNEL_ACCOUNTS.FENCE.getName()));
    }
}

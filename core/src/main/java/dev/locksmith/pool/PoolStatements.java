package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;

import dev.locksmith.codegen.Routines;
import dev.locksmith.codegen.tables.ChannelAccountLeasesTable;
import dev.locksmith.internal.RenderedQuery;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jooq.CommonTableExpression;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Param;
import org.jooq.Record2;
import org.jooq.Select;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The pool's hot statements, written in the DSL and rendered once per {@link ChannelAccountPool}
 * (see {@link RenderedQuery} for why). Every one returns rows: see {@link RenderedQuery#execute}.
 *
 * <p>An account's row is never updated by a lease, only locked. An acquisition picks an account
 * with no live lease and locks it {@code FOR UPDATE SKIP LOCKED}, then inserts the lease unless a
 * live one is there after all; a {@link #release} ends the lease row rather than deleting it, so
 * that it records the account's last use until the turn of the lease generations empties its
 * slot ({@link LeaseGenerations}). The look for a live lease must use a snapshot taken after the
 * lock was granted, so that it sees the lease of every acquirer that held that lock before; the
 * pick's own look may be older than its lock, and only chooses the candidate. A lock leaves no
 * newer row version for the locker to re-check, so a look with the pick's snapshot would insert a
 * second lease of an account leased meanwhile. On one server that look is the schema's VOLATILE
 * function {@code channel_account_leased}, whose query takes a snapshot of its own under READ
 * COMMITTED, in the same statement ({@link #acquire}: one round trip, auto-committed when the
 * caller's context is); on Citus, which would run the function on a worker in a separate
 * transaction, it is the second statement of a transaction ({@link #pick}, {@link #leased},
 * {@link #lease}).
 */
final class PoolStatements {

    static final String OWNER = "owner";
    static final String LEASE = "lease";
    static final String START = "start";
    static final String PROBES = "probes";

    /** Random slots {@link AcquireStrategy#RANDOM_PROBES} looks at before it falls back to a scan. */
    static final int PROBE_COUNT = 8;

    /** The one isolation level an acquisition accepts, as {@code current_setting} names it. */
    static final String READ_COMMITTED = "read committed";

    static final String KEY = "public_key";
    static final String ISOLATION = "isolation";
    static final String PICKED = "picked";
    static final String BUCKET = "bucket";

    /** Citus's set: every statement names one bucket ({@code :bucket}), the tables' distribution column. */
    final boolean distributed;

    /**
     * On one server, an acquisition in one statement: one account with no live lease locked, and
     * its lease inserted unless {@code channel_account_leased} finds a live one (or the transaction
     * is not READ COMMITTED); the key picked ({@link #PICKED}), the isolation, and the lease's
     * columns (null when it was not inserted). No row when no account was free.
     */
    final RenderedQuery acquire;
    /** On Citus, statement 1 of an acquisition: one account with no live lease, locked; its key and bucket. */
    final RenderedQuery pick;
    /** On Citus, statement 3: the lease of {@code :public_key}, inserted; the lease. */
    final RenderedQuery lease;
    /** On Citus, statement 2: whether {@code :public_key} has a live lease. */
    final RenderedQuery leased;

    final RenderedQuery release;
    final RenderedQuery extend;
    /** Whether {@code :owner} holds a live lease of {@code :public_key}: for a look again after a miss. */
    final RenderedQuery held;
    /**
     * The account {@code :public_key}'s row locked {@code FOR KEY SHARE}, before an extension: an
     * acquirer's pick ({@code FOR UPDATE SKIP LOCKED}) passes the account over meanwhile, and one
     * that holds the lock already is waited for, after which the lease's expiry is compared with a
     * clock that is past the acquirer's (so an extension never revives a lease another took).
     */
    final RenderedQuery lockAccount;

    PoolStatements(DSLContext dsl, AcquireStrategy strategy, boolean distributed) {
        this.distributed = distributed;
        Param<Integer> bucket = DSL.param(BUCKET, SQLDataType.INTEGER);
        Condition inBucket = distributed ? CHANNEL_ACCOUNTS.BUCKET.eq(bucket) : DSL.noCondition();
        // the accounts' bucket as the leases' subqueries compare it: on Citus the bound bucket, so
        // that every table of the statement is filtered by it and the statement stays a router one
        Field<Integer> accountBucket = distributed ? bucket : CHANNEL_ACCOUNTS.BUCKET;
        Param<String> owner = DSL.param(OWNER, SQLDataType.VARCHAR);
        Param<String> key = DSL.param(KEY, SQLDataType.VARCHAR);
        // an account's look in the scan from a random start: on one server at its latest lease only
        // (fences grow per account: see latestLease); on Citus, whose workers may take fences from
        // ranges of their own, at every kept lease
        Condition scanned = distributed ? unleased(accountBucket) : latestNotLive(accountBucket);
        Select<Record2<String, Integer>> choice = switch (strategy) {
            case RANDOM_PROBES -> randomProbes(inBucket, accountBucket, scanned);
            case RANDOM_START ->
                DSL.selectFrom(randomStartBranches(inBucket, scanned).asTable("candidates"))
                        .limit(DSL.inline(1));
            case ORDER_BY_RANDOM -> orderByRandom(inBucket, accountBucket, distributed);
        };
        Field<String> isolation = DSL.field("current_setting('transaction_isolation')", String.class);
        // with the transaction's isolation, so that a REPEATABLE READ transaction (one the
        // acquisition joined) is refused before the lease: its look for a live lease would reuse
        // the transaction's snapshot, not take one after the lock
        Table<Record2<String, Integer>> picked = choice.asTable(PICKED);
        pick = RenderedQuery.of(
                dsl,
                DSL.select(
                                picked.field(CHANNEL_ACCOUNTS.PUBLIC_KEY),
                                picked.field(CHANNEL_ACCOUNTS.BUCKET),
                                isolation.as(ISOLATION))
                        .from(picked));
        ChannelAccountLeasesTable live = CHANNEL_ACCOUNT_LEASES.as("live");
        Field<Integer> leaseBucket = distributed ? bucket : DSL.inline(0);
        Field<OffsetDateTime> leaseEnd =
                DSL.currentOffsetDateTime().plus(DSL.param(LEASE, SQLDataType.INTERVALDAYTOSECOND));
        Condition liveOfKey = live.PUBLIC_KEY
                .eq(key)
                .and(distributed ? live.BUCKET.eq(bucket) : DSL.noCondition())
                .and(live(live, DSL.currentOffsetDateTime()));
        List<Field<?>> columns = List.of(
                CHANNEL_ACCOUNT_LEASES.PUBLIC_KEY,
                CHANNEL_ACCOUNT_LEASES.BUCKET,
                CHANNEL_ACCOUNT_LEASES.LOCKED_BY,
                CHANNEL_ACCOUNT_LEASES.LOCKED_AT,
                CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL);
        List<Field<?>> returned = List.of(
                CHANNEL_ACCOUNT_LEASES.PUBLIC_KEY,
                CHANNEL_ACCOUNT_LEASES.LOCKED_BY,
                CHANNEL_ACCOUNT_LEASES.LOCKED_AT,
                CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL,
                CHANNEL_ACCOUNT_LEASES.FENCE);
        // now(): when the acquisition's transaction began, a moment ago when it is the statement's
        // own or one of the pool's; in a caller's transaction when that began, so that the lease
        // counts from then (and a lease that ran out since counts as held a moment longer, never as
        // free too early); a stable function, which Citus evaluates once
        CommonTableExpression<Record2<String, Integer>> pickedOnce =
                DSL.name(PICKED).as(choice);
        Field<String> pickedKey = Objects.requireNonNull(pickedOnce.field(CHANNEL_ACCOUNTS.PUBLIC_KEY));
        CommonTableExpression<?> inserted = DSL.name("inserted")
                .as(dsl.insertInto(CHANNEL_ACCOUNT_LEASES)
                        .columns(columns)
                        .select(DSL.select(pickedKey, leaseBucket, owner, DSL.currentOffsetDateTime(), leaseEnd)
                                .from(pickedOnce)
                                .where(isolation.eq(DSL.inline(READ_COMMITTED)))
                                .andNot(Routines.channelAccountLeased(pickedKey)))
                        .returning(returned));
        List<Field<?>> acquired = new ArrayList<>();
        acquired.add(pickedKey.as(PICKED));
        acquired.add(isolation.as(ISOLATION));
        returned.forEach(column -> acquired.add(inserted.field(column)));
        acquire = RenderedQuery.of(
                dsl,
                DSL.with(pickedOnce)
                        .with(inserted)
                        .select(acquired)
                        .from(pickedOnce)
                        .leftJoin(inserted)
                        .on(DSL.trueCondition()));
        // On Citus, whose INSERT ... SELECT would run the columns' defaults (the fence's sequence)
        // on a worker, a plain INSERT, whose defaults the coordinator evaluates, after the look
        // (leased) in a statement of its own (the account's lock, held, keeps that look valid)
        lease = RenderedQuery.of(
                dsl,
                dsl.insertInto(CHANNEL_ACCOUNT_LEASES)
                        .columns(columns)
                        .values(key, leaseBucket, owner, DSL.currentOffsetDateTime(), leaseEnd)
                        .returning(returned));
        leased = RenderedQuery.of(
                dsl, dsl.select(DSL.inline(1)).from(live).where(liveOfKey).limit(DSL.inline(1)));
        // Citus refuses volatile functions in an UPDATE or DELETE of a distributed table: there the
        // lease checks use statement_timestamp(), the time the statement arrived (see heldBy)
        Field<OffsetDateTime> clock = distributed ? statementTimestamp() : clockTimestamp();
        Condition leaseInBucket = distributed ? CHANNEL_ACCOUNT_LEASES.BUCKET.eq(bucket) : DSL.noCondition();
        // On one server the statements on a held lease go to the account's latest lease (the only
        // one that can be live: see latestLease) by its fence, found by a backward probe of the
        // (public_key, fence) index per slot, instead of every kept lease of the account
        ChannelAccountLeasesTable latest = CHANNEL_ACCOUNT_LEASES.as("latest");
        Condition whichLease = distributed
                ? leaseInBucket
                : CHANNEL_ACCOUNT_LEASES.FENCE.eq(
                        DSL.field(DSL.select(DSL.max(latest.FENCE)).from(latest).where(latest.PUBLIC_KEY.eq(key))));
        // the row stays, ended, as the account's last use (see randomProbes) until its slot is emptied
        release = RenderedQuery.of(
                dsl,
                dsl.update(CHANNEL_ACCOUNT_LEASES)
                        .set(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL, clock)
                        .set(CHANNEL_ACCOUNT_LEASES.RELEASED_AT, clock)
                        .where(heldBy(key, owner, clock))
                        .and(whichLease)
                        .returning(CHANNEL_ACCOUNT_LEASES.PUBLIC_KEY));
        // clock_timestamp(), not now(): in a caller's long transaction now() is when it began, and
        // greatest(): an extension never shortens the lease already held.
        extend = RenderedQuery.of(
                dsl,
                dsl.update(CHANNEL_ACCOUNT_LEASES)
                        .set(
                                CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL,
                                DSL.greatest(
                                        CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL,
                                        clock.plus(DSL.param(LEASE, SQLDataType.INTERVALDAYTOSECOND))))
                        .where(heldBy(key, owner, clock))
                        .and(whichLease)
                        .returning(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL));
        lockAccount = RenderedQuery.of(
                dsl,
                dsl.select(DSL.inline(1))
                        .from(CHANNEL_ACCOUNTS)
                        .where(CHANNEL_ACCOUNTS.PUBLIC_KEY.eq(key))
                        .and(inBucket)
                        .forKeyShare());
        held = RenderedQuery.of(
                dsl,
                dsl.select(DSL.inline(1))
                        .from(CHANNEL_ACCOUNT_LEASES)
                        .where(heldBy(key, owner, clock))
                        .and(whichLease)
                        .limit(DSL.inline(1)));
    }

    /**
     * No live lease of the account in the statement's {@code channel_accounts} row, whose bucket is
     * {@code bucket} (the row's column, or on Citus the bound bucket). Compared with {@code now()}:
     * an acquisition runs in a transaction of its own (or a statement), begun a moment ago, and a
     * lease that ran out since then counts as held a moment longer (never as free too early). A
     * {@code NOT EXISTS} over all the account's kept leases rather than a look at its latest
     * ({@link #latestLease}), so that a statement that reads many accounts (a scan, a random
     * order) can make it one anti-join.
     */
    static Condition unleased(Field<Integer> bucket) {
        ChannelAccountLeasesTable live = CHANNEL_ACCOUNT_LEASES.as("live");
        // NOT EXISTS as a template rather than DSL.notExists(Select): jOOQ 3.21 replaced that
        // method by notExists(TableLike), so code compiled against 3.19 fails to link on 3.21
        // (NoSuchMethodError); DSL.condition(String, QueryPart...) is the same in both.
        return DSL.condition(
                "NOT EXISTS ({0})",
                DSL.selectOne()
                        .from(live)
                        .where(live.PUBLIC_KEY.eq(CHANNEL_ACCOUNTS.PUBLIC_KEY))
                        .and(live.BUCKET.eq(bucket))
                        .and(live(live, DSL.currentOffsetDateTime())));
    }

    /**
     * The account in the statement's {@code channel_accounts} row (of bucket {@code bucket}) has
     * no live lease, by a look at its latest lease ({@link #latestLease}): per account a backward
     * probe of each slot's {@code (public_key, fence)} index and one row read, where
     * {@link #unleased} reads every kept lease of the account (but can be one anti-join).
     */
    @SuppressWarnings("NullAway") // the fields named here are those latestLease selects
    private static Condition latestNotLive(Field<Integer> bucket) {
        Table<?> latest = latestLease(bucket);
        return DSL.condition(
                "NOT EXISTS ({0})",
                DSL.selectOne()
                        .from(latest)
                        .where(live(
                                latest.field(CHANNEL_ACCOUNT_LEASES.RELEASED_AT),
                                latest.field(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL),
                                DSL.currentOffsetDateTime())));
    }

    /** A lease of {@code leases} that is live at {@code at}: not released, not expired. */
    static Condition live(ChannelAccountLeasesTable leases, Field<OffsetDateTime> at) {
        return live(leases.RELEASED_AT, leases.LOCKED_UNTIL, at);
    }

    /** A lease with these ends is live at {@code at}: not released, not expired. */
    private static Condition live(
            Field<OffsetDateTime> releasedAt, Field<OffsetDateTime> lockedUntil, Field<OffsetDateTime> at) {
        return releasedAt.isNull().and(lockedUntil.gt(at));
    }

    /**
     * The latest lease (by fence) of the account in the statement's {@code channel_accounts} row
     * (of bucket {@code bucket}), as a lateral table of its {@code released_at} and
     * {@code locked_until}. It is the only lease of the account
     * that can be live (leases are inserted under the account's lock, with the next fence, and
     * only when none is live), and its end ({@code locked_until}: its release, its expiry, or its
     * expiry to come) is when the account was last used. No row when no lease of the account is
     * kept (never leased, or its slots emptied since). One backward probe of the leases'
     * {@code (public_key, fence)} index per slot, however many ended leases the slots keep.
     */
    private static Table<?> latestLease(Field<Integer> bucket) {
        ChannelAccountLeasesTable l = CHANNEL_ACCOUNT_LEASES.as("l");
        return DSL.lateral(DSL.select(l.RELEASED_AT, l.LOCKED_UNTIL)
                        .from(l)
                        .where(l.PUBLIC_KEY.eq(CHANNEL_ACCOUNTS.PUBLIC_KEY))
                        .and(l.BUCKET.eq(bucket))
                        .orderBy(l.FENCE.desc())
                        .limit(DSL.inline(1)))
                .as("latest");
    }

    /**
     * The spreading pick: {@link #PROBE_COUNT} uniformly random slots (from {@code :probes}, uniform
     * values in [0, 1), each mapped to {@code min(slot) + floor(u * (max(slot) - min(slot) + 1))}),
     * looked up by the slot index; of those not locked whose latest lease ({@link #latestLease})
     * is not live, the one least recently used (by that lease's end; never used first), ties in
     * probe order: one look serves both the filter and the order. Choosing the less used of
     * several random candidates spreads acquisitions more evenly than one random choice ("power
     * of d choices"), and a slot that no account holds (a gap left by removals) is a miss, not a
     * shortcut to its neighbour. Only when every probe misses does it fall back to the
     * {@link #randomStartBranches(Condition, Condition) scan from a random start}.
     */
    @SuppressWarnings("NullAway") // the fields named here are declared by the aliases above
    private static Select<Record2<String, Integer>> randomProbes(
            Condition inBucket, Field<Integer> bucket, Condition scanned) {
        Table<?> probes = DSL.unnest(DSL.param(PROBES, SQLDataType.DOUBLE.array()))
                .withOrdinality()
                .as("probes", "u", "ord");
        Field<Double> u = probes.field("u", Double.class);
        Field<Long> slot = slotAt(u, inBucket);
        Table<?> latest = latestLease(bucket);
        Field<OffsetDateTime> end = latest.field(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL);
        Field<OffsetDateTime> released = latest.field(CHANNEL_ACCOUNT_LEASES.RELEASED_AT);
        Table<Record2<String, Integer>> probed = DSL.select(CHANNEL_ACCOUNTS.PUBLIC_KEY, CHANNEL_ACCOUNTS.BUCKET)
                .from(probes)
                .join(CHANNEL_ACCOUNTS)
                .on(CHANNEL_ACCOUNTS.SLOT.eq(slot))
                .leftJoin(latest)
                .on(DSL.trueCondition())
                // no lease kept (end null), or one released or run out
                .where(end.isNull().or(DSL.not(live(released, end, DSL.currentOffsetDateTime()))))
                .and(inBucket)
                .orderBy(end.asc().nullsFirst(), probes.field("ord"))
                .limit(DSL.inline(1))
                .forUpdate()
                .of(CHANNEL_ACCOUNTS)
                .skipLocked()
                .asTable("probed");
        Table<Record2<String, Integer>> candidates = DSL.selectFrom(probed)
                .unionAll(randomStartBranches(inBucket, scanned))
                .asTable("candidates");
        return DSL.selectFrom(candidates).limit(DSL.inline(1));
    }

    /**
     * The scan from a random start: accounts without a live lease from {@code :start} on, then
     * before it; each branch a scan of the slot index with LIMIT 1 and SKIP LOCKED, and the outer
     * LIMIT 1 stops at the first branch that yields a row. The start is
     * {@code min(slot) + floor(:start * (max(slot) - min(slot) + 1))} for a uniform
     * {@code :start} in [0, 1), two index probes. The account right after a run of leased or
     * missing slots is proportionally more likely; a pool with every account leased is read
     * whole (one probe of the leases per account).
     */
    private static Select<Record2<String, Integer>> randomStartBranches(Condition inBucket, Condition free) {
        var slot = CHANNEL_ACCOUNTS.SLOT;
        Field<Long> start = slotAt(DSL.param(START, SQLDataType.DOUBLE), inBucket);
        Table<Record2<String, Integer>> after = lockOne(slot.ge(start).and(inBucket), free, "after");
        Table<Record2<String, Integer>> before = lockOne(slot.lt(start).and(inBucket), free, "before");
        return DSL.selectFrom(after).unionAll(DSL.selectFrom(before));
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

    /** The first account by slot matching {@code where} with no live lease, locked with SKIP LOCKED, as a derived table. */
    private static Table<Record2<String, Integer>> lockOne(Condition where, Condition free, String alias) {
        // Each branch is its own derived table: jOOQ would otherwise hoist the first branch's
        // FOR UPDATE onto the whole UNION, which PostgreSQL rejects. LIMIT is a literal, so that
        // a generic plan still knows it reads one row.
        return DSL.select(CHANNEL_ACCOUNTS.PUBLIC_KEY, CHANNEL_ACCOUNTS.BUCKET)
                .from(CHANNEL_ACCOUNTS)
                .where(where)
                .and(free)
                .orderBy(CHANNEL_ACCOUNTS.SLOT)
                .limit(DSL.inline(1))
                .forUpdate()
                .of(CHANNEL_ACCOUNTS)
                .skipLocked()
                .asTable(alias);
    }

    /**
     * {@code ORDER BY random()}; on Citus, where a volatile function turns the pick into a
     * separate distributed subplan, by {@code md5(:start || public_key)} instead: a fresh random
     * order per call from the {@code :start} bound, and an immutable expression, so the statement
     * stays one router query.
     */
    private static Select<Record2<String, Integer>> orderByRandom(
            Condition inBucket, Field<Integer> bucket, boolean distributed) {
        Field<?> order = distributed
                ? DSL.md5(DSL.param(START, SQLDataType.DOUBLE)
                        .cast(SQLDataType.VARCHAR)
                        .concat(CHANNEL_ACCOUNTS.PUBLIC_KEY))
                : DSL.rand();
        return DSL.select(CHANNEL_ACCOUNTS.PUBLIC_KEY, CHANNEL_ACCOUNTS.BUCKET)
                .from(CHANNEL_ACCOUNTS)
                .where(unleased(bucket))
                .and(inBucket)
                .orderBy(order)
                .limit(DSL.inline(1))
                .forUpdate()
                .of(CHANNEL_ACCOUNTS)
                .skipLocked();
    }

    /**
     * {@code owner}'s live lease of {@code key}. Compared with {@code clock_timestamp()}, not
     * {@code now()}: inside a long caller transaction {@code now()} is when it began, and a lease
     * that expired since must not be released as if it were still held.
     */
    private static Condition heldBy(Param<String> key, Param<String> owner, Field<OffsetDateTime> clock) {
        return CHANNEL_ACCOUNT_LEASES
                .PUBLIC_KEY
                .eq(key)
                .and(CHANNEL_ACCOUNT_LEASES.LOCKED_BY.eq(owner))
                .and(live(CHANNEL_ACCOUNT_LEASES, clock));
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

    /** {@code clock_timestamp()}: the time as the statement reads it, not when its transaction began. */
    static Field<OffsetDateTime> clockTimestamp() {
        return DSL.function("clock_timestamp", SQLDataType.TIMESTAMPWITHTIMEZONE);
    }

    /** Maps a row returned by {@link #lease}. */
    static ChannelAccount account(ResultSet row) throws SQLException {
        return new ChannelAccount(
                row.getString(CHANNEL_ACCOUNT_LEASES.PUBLIC_KEY.getName()),
                row.getString(CHANNEL_ACCOUNT_LEASES.LOCKED_BY.getName()),
                row.getObject(CHANNEL_ACCOUNT_LEASES.LOCKED_AT.getName(), OffsetDateTime.class),
                row.getObject(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL.getName(), OffsetDateTime.class),
                row.getLong(CHANNEL_ACCOUNT_LEASES.FENCE.getName()));
    }

    /** Maps a row returned by {@link #pick}: the key, the bucket, the transaction's isolation. */
    record Picked(String publicKey, int bucket, String isolation) {
        static Picked of(ResultSet row) throws SQLException {
            return new Picked(
                    row.getString(CHANNEL_ACCOUNTS.PUBLIC_KEY.getName()),
                    row.getInt(CHANNEL_ACCOUNTS.BUCKET.getName()),
                    row.getString(ISOLATION));
        }
    }
}

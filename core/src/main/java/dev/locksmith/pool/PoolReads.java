package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;

import dev.locksmith.codegen.tables.ChannelAccountLeasesTable;
import dev.locksmith.internal.Errors;
import java.time.OffsetDateTime;
import java.util.Optional;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Table;
import org.jooq.impl.DSL;

/**
 * The pool's reads: an account with its latest lease, and the counts by state. An account's
 * state is its latest lease's (by fence): none or released, idle; live, leased; run out, expired.
 */
final class PoolReads {

    private PoolReads() {}

    /** The account {@code key} and its latest lease ({@link ChannelAccountPool#find}); {@code inBucket} on Citus. */
    static Optional<ChannelAccount> find(DSLContext ctx, String key, Condition inBucket) {
        ChannelAccountLeasesTable l = CHANNEL_ACCOUNT_LEASES.as("l");
        Table<?> latest = DSL.lateral(DSL.select(l.LOCKED_BY, l.LOCKED_AT, l.LOCKED_UNTIL, l.FENCE, l.RELEASED_AT)
                        .from(l)
                        .where(l.PUBLIC_KEY.eq(CHANNEL_ACCOUNTS.PUBLIC_KEY))
                        .and(l.BUCKET.eq(CHANNEL_ACCOUNTS.BUCKET))
                        .orderBy(l.FENCE.desc())
                        .limit(DSL.inline(1)))
                .as("lease");
        return Errors.translating(() -> ctx.select(
                        CHANNEL_ACCOUNTS.PUBLIC_KEY,
                        latest.field(l.LOCKED_BY),
                        latest.field(l.LOCKED_AT),
                        latest.field(l.LOCKED_UNTIL),
                        latest.field(l.FENCE),
                        latest.field(l.RELEASED_AT))
                .from(CHANNEL_ACCOUNTS)
                .leftJoin(latest)
                .on(DSL.trueCondition())
                .where(CHANNEL_ACCOUNTS.PUBLIC_KEY.eq(key))
                .and(inBucket)
                .fetchOptional()
                .map(PoolReads::account));
    }

    /** An account and its latest lease as {@link #find} reads them: idle when none, or released. */
    @SuppressWarnings("NullAway") // the record has the six fields selected in find
    private static ChannelAccount account(Record r) {
        if (r.get(4) == null || r.get(5) != null) {
            return new ChannelAccount(r.get(0, String.class), null, null, null, 0);
        }
        Long fence = r.get(4, Long.class);
        return new ChannelAccount(
                r.get(0, String.class),
                r.get(1, String.class),
                r.get(2, OffsetDateTime.class),
                r.get(3, OffsetDateTime.class),
                fence == null ? 0 : fence);
    }

    /** Counts by state ({@link ChannelAccountPool#stats()}), in one statement on {@code dsl}. */
    static PoolStats stats(DSLContext dsl) {
        Field<OffsetDateTime> now = DSL.currentOffsetDateTime();
        Table<?> leases = latestLeases();
        Field<OffsetDateTime> until = DSL.field(DSL.name("leases", "locked_until"), OffsetDateTime.class);
        Field<OffsetDateTime> released = DSL.field(DSL.name("leases", "released_at"), OffsetDateTime.class);
        Condition idle = until.isNull().or(released.isNotNull());
        return Errors.translating(() -> {
            var r = dsl.select(
                            DSL.count(),
                            DSL.count().filterWhere(idle),
                            DSL.count().filterWhere(DSL.not(idle).and(until.ge(now))),
                            DSL.count().filterWhere(DSL.not(idle).and(until.lt(now))))
                    .from(CHANNEL_ACCOUNTS)
                    .leftJoin(leases)
                    .on(CHANNEL_ACCOUNTS.PUBLIC_KEY.eq(DSL.field(DSL.name("leases", "public_key"), String.class)))
                    .and(CHANNEL_ACCOUNTS.BUCKET.eq(DSL.field(DSL.name("leases", "bucket"), Integer.class)))
                    .fetchSingle();
            return new PoolStats(r.value1(), r.value2(), r.value3(), r.value4());
        });
    }

    /**
     * Each account's latest lease ({@code public_key}, {@code bucket}, {@code locked_until},
     * {@code released_at}), by fence: live, expired, or released (the account idle). One row per
     * key and bucket, so that Citus pushes it down to the shards.
     */
    private static Table<?> latestLeases() {
        var l = CHANNEL_ACCOUNT_LEASES;
        return DSL.selectDistinct(l.PUBLIC_KEY, l.BUCKET, l.LOCKED_UNTIL, l.RELEASED_AT)
                .on(l.PUBLIC_KEY, l.BUCKET)
                .from(l)
                .orderBy(l.PUBLIC_KEY, l.BUCKET, l.FENCE.desc())
                .asTable("leases");
    }
}

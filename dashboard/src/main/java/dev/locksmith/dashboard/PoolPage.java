package dev.locksmith.dashboard;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;

import dev.locksmith.codegen.tables.ChannelAccountLeasesTable;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Result;
import org.jooq.impl.DSL;

/**
 * The channel account pool: idle accounts (no lease, or the latest one released), live leases and
 * expired ones (of accounts not leased again since), each counted up to the cap; the lease holders among the leases
 * that expire first; the leases expiring soonest, and the ones that expired most recently. Leases
 * are rows of {@code channel_account_leases}, read by its {@code (public_key, fence)} index.
 */
final class PoolPage {

    private static final int LIST = 20;
    private static final int HOLDER_SAMPLE = 10_000;

    private final DashboardConfig config;
    private final Reads reads;

    PoolPage(DashboardConfig config, Reads reads) {
        this.config = config;
        this.reads = reads;
    }

    private static Field<Integer> cappedCount(org.jooq.Table<?> table, Condition where, int cap) {
        return DSL.field(
                DSL.selectCount().from(DSL.selectOne().from(table).where(where).limit(DSL.inline(cap))));
    }

    /** A lease not released (a release ends the row, which stays as the account's last use). */
    private static Condition held(ChannelAccountLeasesTable l) {
        return l.RELEASED_AT.isNull();
    }

    /** The latest lease of its account: no later one (by fence) since. */
    private static Condition latest(ChannelAccountLeasesTable l) {
        ChannelAccountLeasesTable later = CHANNEL_ACCOUNT_LEASES.as("later");
        // NOT EXISTS as a template rather than DSL.notExists(Select): jOOQ 3.21 replaced that
        // method by notExists(TableLike), so code compiled against 3.19 fails to link on 3.21
        // (NoSuchMethodError); DSL.condition(String, QueryPart...) is the same in both.
        return DSL.condition(
                "NOT EXISTS ({0})",
                DSL.selectOne()
                        .from(later)
                        .where(later.PUBLIC_KEY.eq(l.PUBLIC_KEY))
                        .and(later.BUCKET.eq(l.BUCKET))
                        .and(later.FENCE.gt(l.FENCE)));
    }

    /** An expired lease that is its account's latest (the account not leased again since). */
    private static Condition expired(Field<OffsetDateTime> now) {
        return held(CHANNEL_ACCOUNT_LEASES)
                .and(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL.lt(now))
                .and(latest(CHANNEL_ACCOUNT_LEASES));
    }

    /** A live lease: not released, not expired. */
    private static Condition live(Field<OffsetDateTime> now) {
        return held(CHANNEL_ACCOUNT_LEASES).and(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL.ge(now));
    }

    record Counts(int idle, int leased, int expired) {}

    static Counts counts(DSLContext tx, int cap) {
        Field<OffsetDateTime> now = DSL.currentOffsetDateTime();
        var r = tx.select(
                        cappedCount(
                                CHANNEL_ACCOUNTS,
                                DSL.condition(
                                        "NOT EXISTS ({0})",
                                        DSL.selectOne()
                                                .from(CHANNEL_ACCOUNT_LEASES)
                                                .where(CHANNEL_ACCOUNT_LEASES.PUBLIC_KEY.eq(
                                                        CHANNEL_ACCOUNTS.PUBLIC_KEY))
                                                .and(CHANNEL_ACCOUNT_LEASES.BUCKET.eq(CHANNEL_ACCOUNTS.BUCKET))
                                                .and(held(CHANNEL_ACCOUNT_LEASES))
                                                .and(latest(CHANNEL_ACCOUNT_LEASES))),
                                cap),
                        cappedCount(CHANNEL_ACCOUNT_LEASES, live(now), cap),
                        cappedCount(CHANNEL_ACCOUNT_LEASES, expired(now), cap))
                .fetchSingle();
        return new Counts(r.value1(), r.value2(), r.value3());
    }

    Layout.Page render(Request request) {
        int cap = config.countCap();
        Html live = reads.section("channel accounts", () -> {
            Counts counts = reads.run(tx -> counts(tx, cap));
            Field<OffsetDateTime> now = DSL.currentOffsetDateTime();
            var soonest = DSL.select(CHANNEL_ACCOUNT_LEASES.LOCKED_BY, CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL)
                    .from(CHANNEL_ACCOUNT_LEASES)
                    .where(live(now))
                    .orderBy(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL)
                    .limit(DSL.inline(HOLDER_SAMPLE))
                    .asTable("leases");
            Field<String> holder = soonest.field(CHANNEL_ACCOUNT_LEASES.LOCKED_BY);
            Result<? extends Record> holders = reads.run(
                    tx -> tx.select(holder, DSL.count(), DSL.min(soonest.field(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL)))
                            .from(soonest)
                            .groupBy(holder)
                            .orderBy(DSL.count().desc(), holder)
                            .limit(DSL.inline(LIST))
                            .fetch());
            Result<? extends Record> expiring = reads.run(tx -> tx.select(
                            CHANNEL_ACCOUNT_LEASES.PUBLIC_KEY,
                            CHANNEL_ACCOUNT_LEASES.LOCKED_BY,
                            CHANNEL_ACCOUNT_LEASES.LOCKED_AT,
                            CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL,
                            now.as("now"))
                    .from(CHANNEL_ACCOUNT_LEASES)
                    .where(live(now))
                    .orderBy(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL)
                    .limit(DSL.inline(LIST))
                    .fetch());
            Result<? extends Record> expired = reads.run(tx -> tx.select(
                            CHANNEL_ACCOUNT_LEASES.PUBLIC_KEY,
                            CHANNEL_ACCOUNT_LEASES.LOCKED_BY,
                            CHANNEL_ACCOUNT_LEASES.LOCKED_AT,
                            CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL,
                            now.as("now"))
                    .from(CHANNEL_ACCOUNT_LEASES)
                    .where(expired(now))
                    .orderBy(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL.desc())
                    .limit(DSL.inline(LIST))
                    .fetch());
            List<Html> holderRows = new ArrayList<>();
            for (Record r : holders) {
                holderRows.add(Html.of(
                        "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                        r.get(0, String.class),
                        Format.count(r.get(1, Long.class)),
                        Format.time(r.get(2, OffsetDateTime.class))));
            }
            return Html.of(
                    """
                    <section class="tiles"><div class="tile"><span class="n" id="pool-idle">{}</span>idle</div>\
                    <div class="tile"><span class="n" id="pool-leased">{}</span>leased</div>\
                    <div class="tile {}"><span class="n" id="pool-expired">{}</span>expired leases</div></section>
                    <section><h2>Lease holders</h2>{}</section>
                    <section><h2>Expiring soonest</h2>{}</section>
                    <section><h2>Expired (acquirable again)</h2>{}</section>
                    """,
                    Format.count(counts.idle(), cap),
                    Format.count(counts.leased(), cap),
                    counts.expired() > 0 ? "warn" : "",
                    Format.count(counts.expired(), cap),
                    holderRows.isEmpty()
                            ? Html.raw("<p class=\"hint\">No account is leased.</p>")
                            : Html.of(
                                    "<table><thead><tr><th>holder</th><th>leases</th><th>first expiry</th></tr></thead><tbody>{}</tbody></table>{}",
                                    Html.join(holderRows),
                                    counts.leased() > HOLDER_SAMPLE
                                            ? Html.of(
                                                    "<p class=\"hint\">Among the {} leases that expire first.</p>",
                                                    Format.count(HOLDER_SAMPLE))
                                            : Html.EMPTY),
                    leases(expiring, "No lease is running."),
                    leases(expired, "No expired lease."));
        });
        return new Layout.Page("Pool", Layout.Nav.POOL, Html.raw("<h1>Channel account pool</h1>"), live);
    }

    private static Html leases(Result<? extends Record> rows, String none) {
        if (rows.isEmpty()) {
            return Html.of("<p class=\"hint\">{}</p>", none);
        }
        List<Html> out = new ArrayList<>();
        for (Record r : rows) {
            OffsetDateTime until = r.get(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL);
            OffsetDateTime now = r.get("now", OffsetDateTime.class);
            Duration left = Duration.between(now, until);
            out.add(Html.of(
                    "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    r.get(CHANNEL_ACCOUNT_LEASES.PUBLIC_KEY),
                    r.get(CHANNEL_ACCOUNT_LEASES.LOCKED_BY),
                    Format.time(r.get(CHANNEL_ACCOUNT_LEASES.LOCKED_AT)),
                    Format.time(until),
                    left.isNegative() ? Format.age(left.negated()) + " ago" : "in " + Format.age(left)));
        }
        return Html.of(
                "<table><thead><tr><th>account</th><th>holder</th><th>leased at</th><th>until</th><th></th></tr></thead><tbody>{}</tbody></table>",
                Html.join(out));
    }
}

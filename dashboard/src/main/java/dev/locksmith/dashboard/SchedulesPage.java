package dev.locksmith.dashboard;

import static dev.locksmith.codegen.Tables.SCHEDULES;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import org.jooq.Record;
import org.jooq.impl.DSL;

/** Recurring schedules, the next to run first, with their next occurrence; at most {@value #LIMIT}. */
final class SchedulesPage {

    static final int LIMIT = 500;

    private final Reads reads;

    SchedulesPage(Reads reads) {
        this.reads = reads;
    }

    Layout.Page render(Request request) {
        Html live = reads.section("schedules", () -> {
            var rows = reads.run(tx -> tx.select(
                            SCHEDULES.asterisk(), DSL.currentOffsetDateTime().as("now"))
                    .from(SCHEDULES)
                    .orderBy(SCHEDULES.NEXT_RUN_AT, SCHEDULES.NAME)
                    .limit(DSL.inline(LIMIT))
                    .fetch());
            if (rows.isEmpty()) {
                return Html.raw("<p class=\"notice\">No recurring schedules are registered.</p>");
            }
            List<Html> out = new ArrayList<>();
            for (Record r : rows) {
                OffsetDateTime now = r.get("now", OffsetDateTime.class);
                OffsetDateTime next = r.get(SCHEDULES.NEXT_RUN_AT);
                Long interval = r.get(SCHEDULES.INTERVAL_MS);
                String trigger = interval != null
                        ? "every " + Format.age(Duration.ofMillis(interval))
                        : r.get(SCHEDULES.CRON) + " (" + r.get(SCHEDULES.ZONE) + ")";
                Duration until = Duration.between(now, next);
                boolean paused = Boolean.TRUE.equals(r.get(SCHEDULES.PAUSED));
                out.add(Html.of(
                        """
                        <tr{}><td>{}</td><td><code>{}</code></td><td><a href="{}/jobs?{}">{}</a></td><td>{}</td>\
                        <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>
                        """,
                        paused ? Html.raw(" class=\"paused\"") : Html.EMPTY,
                        r.get(SCHEDULES.NAME),
                        trigger,
                        request.base(),
                        Urls.query("queue", r.get(SCHEDULES.QUEUE)),
                        r.get(SCHEDULES.QUEUE),
                        r.get(SCHEDULES.KIND),
                        Format.time(next),
                        paused
                                ? "paused"
                                : until.isNegative()
                                        ? "due " + Format.age(until.negated()) + " ago"
                                        : "in " + Format.age(until),
                        Format.time(r.get(SCHEDULES.LAST_OCCURRENCE)),
                        r.get(SCHEDULES.MISFIRE)));
            }
            return Html.of(
                    """
                    <table class="schedules"><thead><tr><th>name</th><th>trigger</th><th>queue</th><th>kind</th>\
                    <th>next run</th><th></th><th>last occurrence</th><th>misfire</th></tr></thead><tbody>{}</tbody></table>{}
                    """,
                    Html.join(out),
                    rows.size() == LIMIT
                            ? Html.of("<p class=\"notice\">The first {} schedules by next run.</p>", LIMIT)
                            : Html.EMPTY);
        });
        return new Layout.Page("Schedules", Layout.Nav.SCHEDULES, Html.raw("<h1>Schedules</h1>"), live);
    }
}

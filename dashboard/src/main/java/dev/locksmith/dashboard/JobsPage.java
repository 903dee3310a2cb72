package dev.locksmith.dashboard;

import static dev.locksmith.codegen.Tables.JOBS;

import java.util.ArrayList;
import java.util.List;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * Jobs, newest first, filtered by queue, status, kind and unique key, a page at a time by keyset
 * ({@code id < before} or {@code id > after}, {@code LIMIT pageSize + 1}): a page costs the same
 * on the millionth row as on the first, and nothing counts the whole table.
 */
final class JobsPage {

    private static final int ERROR_PREVIEW = 120;

    private final DashboardConfig config;
    private final Reads reads;

    JobsPage(DashboardConfig config, Reads reads) {
        this.config = config;
        this.reads = reads;
    }

    /** The filters of a request, validated. */
    record Filter(
            @Nullable String queue,
            @Nullable String status,
            @Nullable String kind,
            @Nullable String uniqueKey,
            @Nullable Long before,
            @Nullable Long after) {

        static Filter of(Request request) {
            String status = request.param("status");
            if (status != null && !JobsSql.STATUSES.contains(status)) {
                throw new BadRequest("status must be one of " + JobsSql.STATUSES);
            }
            return new Filter(
                    bounded(request, "queue", 128),
                    status,
                    bounded(request, "kind", 128),
                    bounded(request, "key", 256),
                    id(request, "before"),
                    id(request, "after"));
        }

        Condition condition() {
            Condition c = DSL.noCondition();
            if (queue != null) {
                c = c.and(JOBS.QUEUE.eq(queue));
            }
            if (status != null) {
                c = c.and(JOBS.STATUS.eq(JobsSql.status(status)));
            }
            if (kind != null) {
                c = c.and(JOBS.KIND.eq(kind));
            }
            if (uniqueKey != null) {
                c = c.and(JOBS.UNIQUE_KEY.eq(uniqueKey));
            }
            return c;
        }

        /** The filter's query string without paging, each value encoded. */
        String query() {
            List<String> parts = new ArrayList<>();
            if (queue != null) {
                parts.add(Urls.query("queue", queue));
            }
            if (status != null) {
                parts.add(Urls.query("status", status));
            }
            if (kind != null) {
                parts.add(Urls.query("kind", kind));
            }
            if (uniqueKey != null) {
                parts.add(Urls.query("key", uniqueKey));
            }
            return String.join("&", parts);
        }

        private static @Nullable String bounded(Request request, String name, int max) {
            return request.param(name, max);
        }

        private static @Nullable Long id(Request request, String name) {
            String value = request.param(name);
            if (value == null) {
                return null;
            }
            try {
                return Long.parseLong(value);
            } catch (NumberFormatException e) {
                throw new BadRequest(name + " must be a job id");
            }
        }
    }

    /** One page of rows, newest first, and whether there are newer and older ones. */
    record Slice(List<Record> rows, boolean newer, boolean older) {}

    static Slice read(DSLContext tx, Filter filter, int pageSize) {
        Condition c = filter.condition();
        List<Record> rows;
        boolean newer;
        boolean older;
        var select = tx.select(
                        JOBS.ID,
                        JOBS.QUEUE,
                        JOBS.KIND,
                        JOBS.STATUS,
                        JOBS.PRIORITY,
                        JOBS.ATTEMPTS,
                        JOBS.MAX_ATTEMPTS,
                        JOBS.RUN_AT,
                        JOBS.CREATED_AT,
                        JOBS.FINISHED_AT,
                        JOBS.UNIQUE_KEY,
                        DSL.left(JOBS.LAST_ERROR, DSL.inline(ERROR_PREVIEW * 2)).as("error"))
                .from(JOBS);
        if (filter.after() != null && filter.before() == null) {
            List<Record> ascending = new ArrayList<>(select.where(c.and(JOBS.ID.gt(filter.after())))
                    .orderBy(JOBS.ID.asc())
                    .limit(DSL.inline(pageSize + 1))
                    .fetch());
            newer = ascending.size() > pageSize;
            rows = new ArrayList<>(ascending.subList(0, Math.min(pageSize, ascending.size())));
            java.util.Collections.reverse(rows);
            older = true;
        } else {
            Condition page = filter.before() == null ? c : c.and(JOBS.ID.lt(filter.before()));
            List<Record> descending = new ArrayList<>(select.where(page)
                    .orderBy(JOBS.ID.desc())
                    .limit(DSL.inline(pageSize + 1))
                    .fetch());
            older = descending.size() > pageSize;
            rows = descending.subList(0, Math.min(pageSize, descending.size()));
            newer = filter.before() != null;
        }
        return new Slice(rows, newer, older);
    }

    Layout.Page render(Request request) {
        Filter filter = Filter.of(request);
        Html live = reads.section("jobs", () -> {
            Slice slice = reads.run(tx -> read(tx, filter, config.pageSize()));
            List<Html> rows = new ArrayList<>();
            for (Record r : slice.rows()) {
                String status = r.get(JOBS.STATUS);
                rows.add(Html.of(
                        """
                        <tr><td class="num"><a href="{}/jobs/{}">{}</a></td><td>{}</td><td>{}</td>\
                        <td><span class="status {}">{}</span></td><td class="num">{}/{}</td><td class="num">{}</td>\
                        <td>{}</td><td>{}</td><td>{}</td><td class="err">{}</td></tr>
                        """,
                        request.base(),
                        r.get(JOBS.ID),
                        r.get(JOBS.ID),
                        r.get(JOBS.QUEUE),
                        r.get(JOBS.KIND),
                        status,
                        status,
                        r.get(JOBS.ATTEMPTS),
                        r.get(JOBS.MAX_ATTEMPTS),
                        r.get(JOBS.PRIORITY),
                        Format.time(r.get(JOBS.RUN_AT)),
                        Format.time(r.get(JOBS.FINISHED_AT)),
                        r.get(JOBS.UNIQUE_KEY),
                        Format.firstLine(r.get("error", String.class), ERROR_PREVIEW)));
            }
            String query = filter.query();
            String prefix = request.base() + "/jobs?" + (query.isEmpty() ? "" : query + "&");
            Html pager = Html.of(
                    "<nav class=\"pager\">{}{}{}</nav>",
                    slice.newer()
                            ? Html.of("<a href=\"{}\">« newest</a> ", request.base() + "/jobs?" + query)
                            : Html.EMPTY,
                    slice.newer() && !slice.rows().isEmpty()
                            ? Html.of(
                                    "<a rel=\"prev\" href=\"{}after={}\">‹ newer</a> ",
                                    prefix,
                                    slice.rows().get(0).get(JOBS.ID))
                            : Html.EMPTY,
                    slice.older() && !slice.rows().isEmpty()
                            ? Html.of(
                                    "<a rel=\"next\" id=\"older\" href=\"{}before={}\">older ›</a>",
                                    prefix,
                                    slice.rows().get(slice.rows().size() - 1).get(JOBS.ID))
                            : Html.EMPTY);
            if (rows.isEmpty()) {
                return Html.of("<p class=\"notice\">No jobs match.</p>{}", pager);
            }
            return Html.of("""
                    <table class="jobs"><thead><tr><th>id</th><th>queue</th><th>kind</th><th>status</th><th>attempts</th>\
                    <th>priority</th><th>run at</th><th>finished</th><th>unique key</th><th>last error</th></tr></thead>\
                    <tbody>{}</tbody></table>{}
                    """, Html.join(rows), pager);
        });
        List<Html> options = new ArrayList<>();
        options.add(Html.raw("<option value=\"\">any status</option>"));
        for (String s : JobsSql.STATUSES) {
            options.add(Html.of(
                    "<option{}>{}</option>", s.equals(filter.status()) ? Html.raw(" selected") : Html.EMPTY, s));
        }
        Html fixed = Html.of(
                """
                <h1>Jobs{}</h1>
                <form class="filters" method="get" action="{}/jobs">\
                <label>queue <input name="queue" value="{}" maxlength="128"></label>\
                <label>status <select name="status">{}</select></label>\
                <label>kind <input name="kind" value="{}" maxlength="128"></label>\
                <label>unique key <input name="key" value="{}" maxlength="256"></label>\
                <button type="submit">filter</button> <a href="{}/jobs">clear</a></form>
                """,
                filter.queue() == null ? Html.EMPTY : Html.of(" in {}", filter.queue()),
                request.base(),
                filter.queue(),
                Html.join(options),
                filter.kind(),
                filter.uniqueKey(),
                request.base());
        return new Layout.Page("Jobs", Layout.Nav.JOBS, fixed, live);
    }
}

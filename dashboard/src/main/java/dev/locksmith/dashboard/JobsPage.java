package dev.locksmith.dashboard;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.SelectField;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * Jobs, newest first, filtered by queue, status, kind and unique key, a page at a time by keyset
 * ({@code id < before} or {@code id > after}, {@code LIMIT pageSize + 1}) over the live jobs and
 * the history of finished ones: a page costs the same on the hundred-millionth finished row as on
 * the first, and nothing counts either table.
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

        /** The filter on {@code jobs}. */
        Condition condition() {
            return condition(JOBS.QUEUE, JOBS.STATUS, JOBS.KIND, JOBS.UNIQUE_KEY);
        }

        /** The filter on {@code job_history}. */
        Condition historyCondition() {
            return condition(JOB_HISTORY.QUEUE, JOB_HISTORY.STATUS, JOB_HISTORY.KIND, JOB_HISTORY.UNIQUE_KEY);
        }

        private Condition condition(
                Field<String> queueColumn,
                Field<String> statusColumn,
                Field<String> kindColumn,
                Field<String> keyColumn) {
            Condition c = DSL.noCondition();
            if (queue != null) {
                c = c.and(queueColumn.eq(queue));
            }
            if (status != null) {
                c = c.and(statusColumn.eq(JobsSql.status(status)));
            }
            if (kind != null) {
                c = c.and(kindColumn.eq(kind));
            }
            if (uniqueKey != null) {
                c = c.and(keyColumn.eq(uniqueKey));
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

    /** {@code c} limited to the page's side of the filter's keyset bound on {@code id}. */
    private static Condition keyset(Condition c, org.jooq.Field<Long> id, Filter filter, boolean ascending) {
        if (ascending) {
            return c.and(id.gt(filter.after()));
        }
        return filter.before() != null ? c.and(id.lt(filter.before())) : c;
    }

    /**
     * One page: live jobs from {@code jobs} (unless the filter asks for a finished status) and
     * finished ones from {@code job_history} (unless it asks for a live one), each read by keyset
     * with {@code LIMIT pageSize + 1} and merged by id. In the history, a page without a status
     * filter reads each finished status separately, so that the {@code (queue, status, id)} and
     * {@code (status, id)} indexes serve it: each read stops after the page's rows (per day
     * partition), whatever the history holds. Kind and unique key filter the rows those reads
     * walk.
     */
    static Slice read(DSLContext tx, Filter filter, int pageSize) {
        boolean ascending = filter.after() != null && filter.before() == null;
        int limit = pageSize + 1;
        List<Record> merged = new ArrayList<>();
        if (filter.status() == null || JobsSql.LIVE_STATUSES.contains(filter.status())) {
            Condition c = keyset(filter.condition(), JOBS.ID, filter, ascending);
            merged.addAll(tx.select(columns(
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
                            JOBS.LAST_ERROR))
                    .from(JOBS)
                    .where(c)
                    .orderBy(ascending ? JOBS.ID.asc() : JOBS.ID.desc())
                    .limit(DSL.inline(limit))
                    .fetch());
        }
        List<String> finished = filter.status() == null
                ? JobsSql.FINISHED_STATUSES
                : JobsSql.FINISHED_STATUSES.contains(filter.status()) ? List.of(filter.status()) : List.of();
        for (String status : finished) {
            Condition c = keyset(
                    filter.historyCondition().and(JOB_HISTORY.STATUS.eq(JobsSql.status(status))),
                    JOB_HISTORY.ID,
                    filter,
                    ascending);
            merged.addAll(tx.select(columns(
                            JOB_HISTORY.ID,
                            JOB_HISTORY.QUEUE,
                            JOB_HISTORY.KIND,
                            JOB_HISTORY.STATUS,
                            JOB_HISTORY.PRIORITY,
                            JOB_HISTORY.ATTEMPTS,
                            JOB_HISTORY.MAX_ATTEMPTS,
                            JOB_HISTORY.RUN_AT,
                            JOB_HISTORY.CREATED_AT,
                            JOB_HISTORY.FINISHED_AT,
                            JOB_HISTORY.UNIQUE_KEY,
                            JOB_HISTORY.LAST_ERROR))
                    .from(JOB_HISTORY)
                    .where(c)
                    .orderBy(ascending ? JOB_HISTORY.ID.asc() : JOB_HISTORY.ID.desc())
                    .limit(DSL.inline(limit))
                    .fetch());
        }
        Comparator<Record> byId = Comparator.comparing(r -> r.get(ID));
        merged.sort(ascending ? byId : byId.reversed());
        List<Record> page = new ArrayList<>(merged.subList(0, Math.min(limit, merged.size())));
        boolean more = page.size() > pageSize;
        List<Record> rows = new ArrayList<>(page.subList(0, Math.min(pageSize, page.size())));
        if (ascending) {
            java.util.Collections.reverse(rows);
            return new Slice(rows, more, true);
        }
        return new Slice(rows, filter.before() != null, more);
    }

    private static final Field<Long> ID = DSL.field(DSL.name("id"), Long.class);

    /** The listed columns, named as {@code jobs}' columns whichever table they come from. */
    private static List<SelectField<?>> columns(Field<?>... fields) {
        List<SelectField<?>> result = new ArrayList<>();
        for (int i = 0; i < fields.length - 1; i++) {
            result.add(fields[i].as(fields[i].getName()));
        }
        Field<?> lastError = fields[fields.length - 1];
        result.add(DSL.left(lastError.coerce(String.class), DSL.inline(ERROR_PREVIEW * 2))
                .as("error"));
        return result;
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

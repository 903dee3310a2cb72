package dev.locksmith.dashboard;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;

import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.QueueDepth;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.types.DayToSecond;

/**
 * The queues: per queue, pending and running jobs (counted up to the cap by
 * {@link JobQueue#depth}), the age of the oldest due job, and the jobs that finished in the last
 * hour by status; over all queues, a chart of jobs finished per minute. Finished counts come
 * from {@code finished_at} of the history ({@code job_history}): failed and cancelled jobs always
 * (until retention expires them), done jobs only with {@code keepCompleted}. They read the newest
 * {@value #FINISHED_SAMPLE} rows of the last hour at most, through the index on
 * {@code finished_at} of the one or two day partitions the hour falls in: the same work with a
 * thousand rows of history as with a hundred million.
 */
final class QueuesPage {

    static final int FINISHED_SAMPLE = 100_000;
    static final int MAX_QUEUES = 100;
    static final int WINDOW_MINUTES = 60;
    static final int CHART_MINUTES = 30;
    private static final int RUNNING_SAMPLE = 10_000;

    private final DashboardConfig config;
    private final Reads reads;
    private final JobQueue queue;

    QueuesPage(DashboardConfig config, Reads reads, JobQueue queue) {
        this.config = config;
        this.reads = reads;
        this.queue = queue;
    }

    /** Finished jobs of the last hour: per queue {done, failed, cancelled}, and per minute ago {done, failed}. */
    @SuppressWarnings("ArrayRecordComponent") // counters filled while reading, read once to render
    record Finished(Map<String, long[]> byQueue, long[][] byMinute, boolean truncated) {}

    Layout.Page render(Request request) {
        Html live = reads.section("queues", () -> {
            Finished finished = reads.run(QueuesPage::finished);
            List<String> queues = reads.run(QueuesPage::liveQueues);
            TreeSet<String> all = new TreeSet<>(queues);
            all.addAll(finished.byQueue().keySet());
            List<Html> rows = new ArrayList<>();
            long pending = 0;
            long running = 0;
            for (String name : all.stream().limit(MAX_QUEUES).toList()) {
                QueueDepth depth = queue.depth(name, config.countCap());
                long[] f = finished.byQueue().getOrDefault(name, new long[3]);
                pending += depth.pending();
                running += depth.running();
                String q = Urls.query("queue", name);
                rows.add(Html.of(
                        """
                        <tr><td><a href="{}/jobs?{}">{}</a></td><td class="num"><a href="{}/jobs?{}&amp;status=pending">{}</a></td>\
                        <td class="num"><a href="{}/jobs?{}&amp;status=running">{}</a></td><td class="num">{}</td>\
                        <td class="num">{}</td><td class="num {}"><a href="{}/jobs?{}&amp;status=failed">{}</a></td><td class="num">{}</td></tr>
                        """,
                        request.base(),
                        q,
                        name,
                        request.base(),
                        q,
                        Format.count(depth.pending(), depth.cap()),
                        request.base(),
                        q,
                        Format.count(depth.running(), depth.cap()),
                        depth.oldestDuePendingAge().map(Format::age).orElse("–"),
                        Format.count(f[0]),
                        f[1] > 0 ? "bad" : "",
                        request.base(),
                        q,
                        Format.count(f[1]),
                        Format.count(f[2])));
            }
            long done = 0;
            long failed = 0;
            for (long[] f : finished.byQueue().values()) {
                done += f[0];
                failed += f[1];
            }
            Html table = rows.isEmpty()
                    ? Html.raw(
                            "<p class=\"notice\">No jobs: no queue has pending, running or recently finished jobs.</p>")
                    : Html.of("""
                            <table class="queues"><thead><tr><th>queue</th><th>pending</th><th>running</th><th>oldest due</th>\
                            <th>done (1 h)</th><th>failed (1 h)</th><th>cancelled (1 h)</th></tr></thead><tbody>{}</tbody></table>
                            """, Html.join(rows));
            return Html.of(
                    """
                    <section class="tiles"><div class="tile"><span class="n" id="total-pending">{}</span>pending</div>\
                    <div class="tile"><span class="n" id="total-running">{}</span>running</div>\
                    <div class="tile"><span class="n" id="total-done">{}</span>done in the last hour</div>\
                    <div class="tile {}"><span class="n" id="total-failed">{}</span>failed in the last hour</div></section>
                    <section><h2>Finished per minute, last {} minutes</h2>{}{}</section>
                    <section><h2>Queues</h2>{}</section>
                    """,
                    Format.count(pending),
                    Format.count(running),
                    Format.count(done),
                    failed > 0 ? "bad" : "",
                    Format.count(failed),
                    CHART_MINUTES,
                    Chart.finishedPerMinute(finished.byMinute(), CHART_MINUTES),
                    finished.truncated()
                            ? Html.of(
                                    "<p class=\"notice\">More than {} jobs finished in the last hour: the counts are of the newest {}.</p>",
                                    Format.count(FINISHED_SAMPLE),
                                    Format.count(FINISHED_SAMPLE))
                            : Html.EMPTY,
                    table);
        });
        Html fixed = Html.of("""
                <h1>Queues</h1>
                <p class="hint">Pending and running are counted up to {}. Done counts need <code>keepCompleted</code> \
                (without it a completed job's row is deleted); failed and cancelled jobs stay until retention deletes them.</p>
                """, Format.count(config.countCap()));
        Html limits = new LimitsPanel(config, reads, queue).render();
        return new Layout.Page(
                "Queues",
                Layout.Nav.QUEUES,
                fixed,
                Html.of("{}<section><h2>Concurrency limits</h2>{}</section>", live, limits));
    }

    /** Queues with pending jobs (a loose scan of the claim index) or running ones (a bounded sample). */
    static List<String> liveQueues(DSLContext tx) {
        var queues = DSL.name("queues");
        Field<String> name = DSL.field(DSL.name("queues", "queue"), SQLDataType.VARCHAR);
        Field<String> pending = JobsSql.status("pending");
        var cte = queues.fields("queue")
                .as(DSL.select(DSL.field(DSL.select(JOBS.QUEUE)
                                .from(JOBS)
                                .where(JOBS.STATUS.eq(pending))
                                .orderBy(JOBS.QUEUE)
                                .limit(DSL.inline(1))))
                        .unionAll(DSL.select(DSL.field(DSL.select(JOBS.QUEUE)
                                        .from(JOBS)
                                        .where(JOBS.STATUS.eq(pending))
                                        .and(JOBS.QUEUE.gt(name))
                                        .orderBy(JOBS.QUEUE)
                                        .limit(DSL.inline(1))))
                                .from(DSL.table(queues))
                                .where(name.isNotNull())));
        TreeSet<String> result = new TreeSet<>(tx.withRecursive(cte)
                .select(name)
                .from(DSL.table(queues))
                .where(name.isNotNull())
                .limit(DSL.inline(MAX_QUEUES))
                .fetch(name));
        var running = DSL.select(JOBS.QUEUE)
                .from(JOBS)
                .where(JOBS.STATUS.eq(JobsSql.status("running")))
                .limit(DSL.inline(RUNNING_SAMPLE))
                .asTable("running");
        result.addAll(tx.selectDistinct(running.field(JOBS.QUEUE)).from(running).fetch(running.field(JOBS.QUEUE)));
        return List.copyOf(result);
    }

    /** The newest finished jobs of the last hour, grouped by queue, status and minute. */
    static Finished finished(DSLContext tx) {
        Field<OffsetDateTime> now = DSL.currentOffsetDateTime();
        var recent = DSL.select(JOB_HISTORY.QUEUE, JOB_HISTORY.STATUS, JOB_HISTORY.FINISHED_AT)
                .from(JOB_HISTORY)
                .where(JOB_HISTORY.FINISHED_AT.ge(
                        now.minus(DSL.inline(DayToSecond.valueOf(Duration.ofMinutes(WINDOW_MINUTES))))))
                .orderBy(JOB_HISTORY.FINISHED_AT.desc())
                .limit(DSL.inline(FINISHED_SAMPLE))
                .asTable("recent");
        Field<String> queue = recent.field(JOB_HISTORY.QUEUE);
        Field<String> status = recent.field(JOB_HISTORY.STATUS);
        Field<Integer> minutesAgo = DSL.field(
                "floor(extract(epoch FROM ({0} - {1})) / 60)::int",
                SQLDataType.INTEGER, now, recent.field(JOB_HISTORY.FINISHED_AT));
        Map<String, long[]> byQueue = new TreeMap<>();
        long[][] byMinute = new long[WINDOW_MINUTES + 1][2];
        long total = 0;
        for (var r : tx.select(queue, status, minutesAgo, DSL.count())
                .from(recent)
                .groupBy(queue, status, minutesAgo)
                .fetch()) {
            int index = switch (r.value2()) {
                case "done" -> 0;
                case "failed" -> 1;
                default -> 2;
            };
            long n = r.value4();
            total += n;
            byQueue.computeIfAbsent(r.value1(), q -> new long[3])[index] += n;
            int ago = Math.max(0, Math.min(WINDOW_MINUTES, r.value3()));
            if (index < 2) {
                byMinute[ago][index] += n;
            }
        }
        return new Finished(byQueue, byMinute, total >= FINISHED_SAMPLE);
    }
}

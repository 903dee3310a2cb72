package dev.locksmith.dashboard;

import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;

import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.JobQueue;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.jooq.Field;
import org.jooq.Record5;
import org.jooq.impl.DSL;

/**
 * The queues page's concurrency limits ({@link ConcurrencyLimits}): per queue that has any, its
 * default limit per key, how many keys have a limit of their own, how many keys run as many jobs
 * as their limit, and the due jobs those keys hold back (counted up to the cap,
 * {@link ConcurrencyLimits#heldBack}), and the {@value #TOP_KEYS} keys holding back the most
 * ({@link ConcurrencyLimits#heldBackByKey}, read only for a queue with a key at its limit, each
 * key's jobs counted up to {@value #TOP_KEYS_CAP}). The
 * limits are read in the page's read-only transaction (a group over the small limits table,
 * {@value #MAX_QUEUES} queues at most); the held-back counts on the queue's own context, as the
 * depths are.
 */
final class LimitsPanel {

    static final int MAX_QUEUES = 100;

    /** Keys named per queue: those at a limit that hold back the most jobs. */
    static final int TOP_KEYS = 3;

    /**
     * Where counting a key's held-back jobs stops when ranking the keys (or the page's cap, if
     * lower): the ranking counts every key at a limit, so a page's work grows with those keys
     * times this, every refresh.
     */
    static final int TOP_KEYS_CAP = 1_000;

    private final DashboardConfig config;
    private final Reads reads;
    private final JobQueue queue;

    LimitsPanel(DashboardConfig config, Reads reads, JobQueue queue) {
        this.config = config;
        this.reads = reads;
        this.queue = queue;
    }

    Html render() {
        return reads.section("concurrency and rate limits", this::limits);
    }

    private Html limits() {
        Field<Integer> fallback = DSL.max(DSL.when(
                        JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY.eq(DSL.inline("")), JOB_CONCURRENCY_LIMITS.MAX_RUNNING))
                .as("fallback");
        Field<Integer> own = DSL.count()
                .filterWhere(JOB_CONCURRENCY_LIMITS
                        .CONCURRENCY_KEY
                        .ne(DSL.inline(""))
                        .and(JOB_CONCURRENCY_LIMITS.MAX_RUNNING.isNotNull()))
                .as("own");
        // the default rate: starts per window
        Field<Integer> starts = DSL.max(DSL.when(
                        JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY.eq(DSL.inline("")), JOB_CONCURRENCY_LIMITS.MAX_STARTS))
                .as("starts");
        Field<Long> window = DSL.max(DSL.when(
                        JOB_CONCURRENCY_LIMITS.CONCURRENCY_KEY.eq(DSL.inline("")),
                        JOB_CONCURRENCY_LIMITS.WINDOW_MICROS))
                .as("window");
        List<Record5<String, Integer, Integer, Integer, Long>> queues =
                reads.run(tx -> tx.select(JOB_CONCURRENCY_LIMITS.QUEUE, fallback, own, starts, window)
                        .from(JOB_CONCURRENCY_LIMITS)
                        .groupBy(JOB_CONCURRENCY_LIMITS.QUEUE)
                        .orderBy(JOB_CONCURRENCY_LIMITS.QUEUE)
                        .limit(MAX_QUEUES)
                        .fetch());
        if (queues.isEmpty()) {
            return Html.raw("<p class=\"notice\" id=\"no-concurrency-limits\">No queue has concurrency limits.</p>");
        }
        List<Html> rows = new ArrayList<>();
        for (Record5<String, Integer, Integer, Integer, Long> q : queues) {
            ConcurrencyLimits.HeldBack held = queue.concurrencyLimits().heldBack(q.value1(), config.countCap());
            rows.add(Html.of(
                    "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>"
                            + "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                    q.value1(),
                    q.value2() == null ? "–" : Format.count(q.value2()),
                    Format.count(q.value3()),
                    q.value4() == null || q.value5() == null
                            ? "–"
                            : q.value4() + " per " + Format.age(Duration.of(q.value5(), ChronoUnit.MICROS)),
                    Format.count(held.keysAtLimit()),
                    Format.count(held.jobsHeldBack(), held.cap()),
                    topKeys(q.value1(), held)));
        }
        return Html.of(
                "<p class=\"hint\">Jobs held back wait for their key to drop below its limit, not for a worker "
                        + "(<code>docs/concurrency-limits.md</code>).</p>"
                        + "<table class=\"limits\" id=\"concurrency-limits\"><thead><tr><th>queue</th><th>limit per key</th>"
                        + "<th>keys with their own</th><th>starts per key</th><th>keys at their limit</th><th>jobs held back</th>"
                        + "<th>most held back by</th></tr></thead>"
                        + "<tbody>{}</tbody></table>",
                Html.join(rows));
    }

    /** "t-1 (2), t-9 (1)": the keys holding back the most, with their held-back jobs. */
    private Html topKeys(String q, ConcurrencyLimits.HeldBack held) {
        if (held.keysAtLimit() == 0) {
            return Html.raw("–");
        }
        List<Html> keys = new ArrayList<>();
        int cap = Math.min(held.cap(), TOP_KEYS_CAP);
        for (var key : queue.concurrencyLimits().heldBackByKey(q, TOP_KEYS, cap)) {
            keys.add(Html.of(
                    keys.isEmpty() ? "{} ({})" : ", {} ({})",
                    key.concurrencyKey(),
                    Format.count(key.jobsHeldBack(), cap)));
        }
        return Html.join(keys);
    }
}

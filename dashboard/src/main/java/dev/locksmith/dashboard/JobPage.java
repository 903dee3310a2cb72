package dev.locksmith.dashboard;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;

import dev.locksmith.exception.UniqueViolationException;
import dev.locksmith.jobs.JobQueue;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.SelectField;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * One job: every column, its payload (pretty-printed by {@code jsonb_pretty}, cut at
 * {@value #MAX_PAYLOAD} characters) and its last error with the stack trace the worker stored;
 * and, when actions are allowed, the actions its status permits, each confirmed on a page of its
 * own and run through {@link JobQueue} in one transaction.
 */
final class JobPage {

    static final int MAX_PAYLOAD = 100_000;

    /** What can be done to a job, and to which. */
    @SuppressWarnings("ImmutableEnumChecker") // Set.of: unmodifiable
    enum Action {
        RETRY("retry", "Retry", Set.of("failed", "cancelled"), "retried"),
        CANCEL("cancel", "Cancel", Set.of("pending", "running"), "cancelled"),
        DELETE("delete", "Delete", Set.of("done", "failed", "cancelled"), "deleted");

        final String path;
        final String label;
        final Set<String> from;
        final String done;

        Action(String path, String label, Set<String> from, String done) {
            this.path = path;
            this.label = label;
            this.from = from;
            this.done = done;
        }

        static Optional<Action> of(String path) {
            for (Action a : values()) {
                if (a.path.equals(path)) {
                    return Optional.of(a);
                }
            }
            return Optional.empty();
        }
    }

    private final DashboardConfig config;
    private final Reads reads;
    private final JobQueue queue;

    JobPage(DashboardConfig config, Reads reads, JobQueue queue) {
        this.config = config;
        this.reads = reads;
        this.queue = queue;
    }

    /**
     * The job from {@code jobs}, else from {@code job_history} (its columns named as {@code jobs}'
     * columns, the lease's null): one probe of the key, then one per history partition.
     */
    static @Nullable Record read(DSLContext tx, long id) {
        Record live = tx.select(JOBS.asterisk(), pretty(JOBS.PAYLOAD))
                .from(JOBS)
                .where(JOBS.ID.eq(id))
                .fetchOne();
        if (live != null) {
            return live;
        }
        List<SelectField<?>> columns = new ArrayList<>();
        for (Field<?> column : JOBS.fields()) {
            Field<?> kept = JOB_HISTORY.field(column.getName());
            columns.add(kept == null ? DSL.castNull(column).as(column.getName()) : kept.as(column.getName()));
        }
        columns.add(pretty(JOB_HISTORY.PAYLOAD));
        return tx.select(columns)
                .from(JOB_HISTORY)
                .where(JOB_HISTORY.ID.eq(id))
                .limit(DSL.inline(1))
                .fetchOne();
    }

    private static Field<String> pretty(Field<?> payload) {
        return DSL.left(DSL.field("jsonb_pretty({0})", String.class, payload), DSL.inline(MAX_PAYLOAD))
                .as("pretty");
    }

    /** The job's page, or null when there is no such job. */
    Layout.@Nullable Page render(Request request, long id) {
        Record job = reads.run(tx -> read(tx, id));
        if (job == null) {
            return null;
        }
        String status = job.get(JOBS.STATUS);
        List<Html> actions = new ArrayList<>();
        if (!config.readOnly()) {
            for (Action a : Action.values()) {
                if (a.from.contains(status)) {
                    actions.add(Html.of(
                            "<a class=\"button {}\" id=\"action-{}\" href=\"{}/jobs/{}/{}\">{}…</a> ",
                            a.path,
                            a.path,
                            request.base(),
                            id,
                            a.path,
                            a.label));
                }
            }
        }
        String error = job.get(JOBS.LAST_ERROR);
        Html live = Html.of(
                """
                <dl class="job">\
                <dt>status</dt><dd><span class="status {}" id="job-status">{}</span></dd>\
                <dt>queue</dt><dd><a href="{}/jobs?{}">{}</a></dd><dt>kind</dt><dd>{}</dd>\
                <dt>attempts</dt><dd>{} of {}</dd><dt>priority</dt><dd>{}</dd><dt>shard</dt><dd>{}</dd>\
                <dt>run at</dt><dd>{}</dd><dt>created</dt><dd>{}</dd><dt>updated</dt><dd>{}</dd><dt>finished</dt><dd>{}</dd>\
                <dt>lease</dt><dd>{}</dd><dt>fence</dt><dd>{}</dd>\
                <dt>unique key</dt><dd>{}</dd><dt>ordering key</dt><dd>{}</dd>\
                <dt>trace</dt><dd>{}</dd></dl>
                <div class="actions">{}</div>
                <h2>Payload</h2><pre class="payload" id="payload">{}</pre>
                <h2>Last error</h2>{}
                """,
                status,
                status,
                request.base(),
                Urls.query("queue", job.get(JOBS.QUEUE)),
                job.get(JOBS.QUEUE),
                job.get(JOBS.KIND),
                job.get(JOBS.ATTEMPTS),
                job.get(JOBS.MAX_ATTEMPTS),
                job.get(JOBS.PRIORITY),
                job.get(JOBS.SHARD),
                Format.time(job.get(JOBS.RUN_AT)),
                Format.time(job.get(JOBS.CREATED_AT)),
                Format.time(job.get(JOBS.UPDATED_AT)),
                Format.time(job.get(JOBS.FINISHED_AT)),
                job.get(JOBS.LOCKED_BY) == null
                        ? ""
                        : job.get(JOBS.LOCKED_BY) + " until " + Format.time(job.get(JOBS.LOCKED_UNTIL)),
                job.get(JOBS.FENCE),
                job.get(JOBS.UNIQUE_KEY),
                job.get(JOBS.ORDERING_KEY),
                job.get(JOBS.TRACEPARENT),
                actions.isEmpty() && config.readOnly()
                        ? Html.raw("<p class=\"hint\">Read-only dashboard: no actions.</p>")
                        : Html.join(actions),
                job.get("pretty", String.class),
                error == null
                        ? Html.raw("<p class=\"hint\">none</p>")
                        : Html.of("<pre class=\"error-text\" id=\"last-error\">{}</pre>", error));
        Html fixed = Html.of("<h1>Job {}</h1>", id);
        return new Layout.Page("Job " + id, Layout.Nav.JOBS, fixed, live);
    }

    /** The confirmation page of {@code action} on job {@code id}, or null when there is no such job. */
    Layout.@Nullable Page confirm(Request request, long id, Action action, String csrfToken) {
        Record job = reads.run(tx -> read(tx, id));
        if (job == null) {
            return null;
        }
        String status = job.get(JOBS.STATUS);
        Html body;
        if (!action.from.contains(status)) {
            body = Html.of(
                    "<p class=\"notice\">A {} job cannot be {}: only {} ones.</p><p><a href=\"{}/jobs/{}\">back to the job</a></p>",
                    status,
                    action.done,
                    String.join(" or ", action.from.stream().sorted().toList()),
                    request.base(),
                    id);
        } else {
            body = Html.of(
                    """
                    <p>{} job <b>{}</b> (kind <code>{}</code> in queue <code>{}</code>, now <span class="status {}">{}</span>)? \
                    {}</p>
                    <form method="post" action="{}/jobs/{}/{}"><input type="hidden" name="csrf" value="{}">\
                    <button type="submit" class="{}" id="confirm">{}</button> <a href="{}/jobs/{}">keep it as it is</a></form>
                    """,
                    action.label,
                    id,
                    job.get(JOBS.KIND),
                    job.get(JOBS.QUEUE),
                    status,
                    status,
                    switch (action) {
                        case RETRY -> "It becomes pending and runs as soon as a worker claims it.";
                        case CANCEL -> "A worker running it loses its lease.";
                        case DELETE -> "Its row is deleted for good.";
                    },
                    request.base(),
                    id,
                    action.path,
                    csrfToken,
                    action.path,
                    action.label + " job " + id,
                    request.base(),
                    id);
        }
        Html fixed = Html.of("<h1>{} job {}?</h1>{}", action.label, id, body);
        return new Layout.Page(action.label + " job " + id, Layout.Nav.JOBS, fixed, null);
    }

    /** What became of an action. */
    enum Outcome {
        APPLIED,
        NOT_APPLIED,
        UNIQUE_KEY_TAKEN;

        static Optional<Outcome> of(@Nullable String name) {
            for (Outcome o : values()) {
                if (o.name().toLowerCase(Locale.ROOT).equals(name)) {
                    return Optional.of(o);
                }
            }
            return Optional.empty();
        }

        String param() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Runs {@code action} on job {@code id} in one transaction. */
    Outcome perform(long id, Action action) {
        try {
            boolean applied = config.dsl().transactionResult(c -> switch (action) {
                case RETRY -> queue.retry(c.dsl(), id);
                case CANCEL -> queue.cancel(c.dsl(), id);
                case DELETE -> queue.deleteFinished(c.dsl(), id);
            });
            return applied ? Outcome.APPLIED : Outcome.NOT_APPLIED;
        } catch (UniqueViolationException e) {
            return Outcome.UNIQUE_KEY_TAKEN;
        }
    }

    /** The fixed sentence for an outcome (no text from the request is shown). */
    static String message(long id, Action action, Outcome outcome) {
        return switch (outcome) {
            case APPLIED -> "Job " + id + " " + action.done + ".";
            case NOT_APPLIED ->
                "Job " + id + " was not " + action.done
                        + ": it is gone, or its status changed since the page was shown.";
            case UNIQUE_KEY_TAKEN ->
                "Job " + id + " was not " + action.done + ": a live job of its queue holds its unique key.";
        };
    }
}

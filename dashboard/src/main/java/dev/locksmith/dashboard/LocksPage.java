package dev.locksmith.dashboard;

import static dev.locksmith.codegen.Tables.DEADLOCK_EVENT;
import static dev.locksmith.codegen.Tables.LOCK_WAIT_EVENT;

import dev.locksmith.audit.BlockingReport;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.impl.DSL;
import org.jooq.types.DayToSecond;
import org.jspecify.annotations.Nullable;

/**
 * Locks: the live blocking graph ({@link BlockingReport}: who waits for whom), with what each
 * blocking session holds, how long its transaction has run and its query; what holds the MVCC
 * horizon back ({@link HorizonPanel}); and the audit's
 * history: the resources with the most lock-wait time in the last 24 hours (over the newest
 * {@value #WAIT_SAMPLE} waits), the latest waits, and the latest deadlocks.
 */
final class LocksPage {

    static final int WAIT_SAMPLE = 100_000;
    private static final int LIST = 25;
    private static final int MAX_SESSIONS = 200;
    private static final int MAX_DEPTH = 12;
    private static final int DETAIL = 2_000;

    /** A session in the graph: what pg_stat_activity and pg_locks say of it. */
    record Session(
            int pid,
            @Nullable String state,
            @Nullable String user,
            @Nullable String application,
            @Nullable Duration inTransaction,
            String query,
            List<String> holds) {}

    private final Reads reads;

    LocksPage(Reads reads) {
        this.reads = reads;
    }

    /** The sessions of {@code pids}: activity and up to ten granted locks each (a diagnostic: plain SQL, bind values). */
    static Map<Integer, Session> sessions(DSLContext tx, Set<Integer> pids) {
        Map<Integer, Session> result = new HashMap<>();
        if (pids.isEmpty()) {
            return result;
        }
        for (Record r :
                tx.resultQuery("""
                        SELECT a.pid, a.state, a.usename::text AS usename, a.application_name,
                               extract(epoch FROM clock_timestamp() - a.xact_start) * 1000 AS xact_ms,
                               left(a.query, 1000) AS query,
                               ARRAY(SELECT l.locktype || ' ' || l.mode || coalesce(' on ' || l.relation::regclass::text, '')
                                     FROM pg_locks l
                                     WHERE l.pid = a.pid AND l.granted AND l.locktype NOT IN ('virtualxid')
                                     ORDER BY l.locktype = 'relation', l.relation LIMIT 10) AS holds
                        FROM pg_stat_activity a
                        WHERE a.pid = ANY(?)""", (Object) pids.toArray(Integer[]::new)).fetch()) {
            Number ms = r.get("xact_ms", Number.class);
            String[] holds = r.get("holds", String[].class);
            int pid = r.get("pid", Integer.class);
            String query = r.get("query", String.class);
            result.put(
                    pid,
                    new Session(
                            pid,
                            r.get("state", String.class),
                            r.get("usename", String.class),
                            r.get("application_name", String.class),
                            ms == null ? null : Duration.ofMillis(ms.longValue()),
                            query == null ? "" : query,
                            holds == null ? List.of() : List.of(holds)));
        }
        return result;
    }

    Layout.Page render(Request request) {
        Html graph = reads.section("blocking graph", this::graph);
        Html slowest = reads.section("lock-wait history", this::slowestResources);
        Html waits = reads.section("lock-wait history", this::recentWaits);
        Html deadlocks = reads.section("deadlock history", this::deadlocks);
        Html horizon = new HorizonPanel(reads).render();
        Html live = Html.of("""
                <section><h2>Who waits for whom, now</h2>{}</section>
                <section><h2>What holds the MVCC horizon back, now</h2>{}</section>
                <section><h2>Most lock-wait time by resource, last 24 h</h2>{}</section>
                <section><h2>Latest lock waits</h2>{}</section>
                <section><h2>Latest deadlocks</h2>{}</section>
                """, graph, horizon, slowest, waits, deadlocks);
        return new Layout.Page("Locks", Layout.Nav.LOCKS, Html.raw("<h1>Locks</h1>"), live);
    }

    private Html graph() {
        List<BlockingReport.BlockedSession> blocked = reads.run(tx -> new BlockingReport(tx).blockedSessions());
        if (blocked.isEmpty()) {
            return Html.raw("<p class=\"notice\" id=\"no-blocking\">No session is waiting for a lock.</p>");
        }
        Map<Integer, BlockingReport.BlockedSession> waiting = new LinkedHashMap<>();
        Map<Integer, List<Integer>> blocks = new LinkedHashMap<>();
        Set<Integer> pids = new LinkedHashSet<>();
        for (BlockingReport.BlockedSession s : blocked) {
            if (pids.size() >= MAX_SESSIONS) {
                break;
            }
            waiting.putIfAbsent(s.waitingPid(), s);
            pids.add(s.waitingPid());
            for (BlockingReport.Blocker b : s.blockers()) {
                pids.add(b.pid());
                List<Integer> children = blocks.computeIfAbsent(b.pid(), k -> new ArrayList<>());
                if (!children.contains(s.waitingPid())) {
                    children.add(s.waitingPid());
                }
            }
        }
        Map<Integer, Session> sessions = reads.run(tx -> sessions(tx, pids));
        List<Integer> roots = new ArrayList<>();
        for (Integer pid : blocks.keySet()) {
            if (!waiting.containsKey(pid)) {
                roots.add(pid);
            }
        }
        if (roots.isEmpty()) {
            // Every blocker waits too (a cycle the deadlock detector has not broken yet).
            roots.add(blocks.keySet().iterator().next());
        }
        List<Html> trees = new ArrayList<>();
        Set<Integer> shown = new HashSet<>();
        for (Integer root : roots) {
            trees.add(node(root, waiting, blocks, sessions, shown, 0));
        }
        return Html.of(
                "<p class=\"hint\">{} sessions wait. Each holder is listed with the sessions it blocks beneath it.</p><ul class=\"tree\" id=\"blocking-graph\">{}</ul>",
                waiting.size(),
                Html.join(trees));
    }

    private Html node(
            int pid,
            Map<Integer, BlockingReport.BlockedSession> waiting,
            Map<Integer, List<Integer>> blocks,
            Map<Integer, Session> sessions,
            Set<Integer> shown,
            int depth) {
        Session s = sessions.get(pid);
        BlockingReport.BlockedSession w = waiting.get(pid);
        Html waits = w == null
                ? Html.EMPTY
                : Html.of(
                        "<div class=\"waits\">waits {} for <b>{} {}</b>{}</div>",
                        Format.age(w.waitingFor()),
                        w.lockType(),
                        w.mode(),
                        w.relation().map(r -> Html.of(" on <code>{}</code>", r)).orElse(Html.EMPTY));
        Html detail = s == null
                ? Html.raw("<div class=\"hint\">(session ended)</div>")
                : Html.of(
                        "<div class=\"meta\">{} · {}{}{}</div>{}<pre class=\"query\">{}</pre>",
                        s.state() == null ? "state hidden" : s.state(),
                        s.user() == null ? "" : s.user(),
                        s.inTransaction() == null
                                ? Html.EMPTY
                                : Html.of(" · transaction open {}", Format.age(s.inTransaction())),
                        s.application() == null || s.application().isEmpty()
                                ? Html.EMPTY
                                : Html.of(" · <code>{}</code>", s.application()),
                        s.holds().isEmpty() || (w != null && !blocks.containsKey(pid))
                                ? Html.EMPTY
                                : Html.of("<div class=\"holds\">holds: {}</div>", String.join(", ", s.holds())),
                        s.query());
        List<Html> children = new ArrayList<>();
        if (shown.add(pid) && depth < MAX_DEPTH) {
            for (Integer child : blocks.getOrDefault(pid, List.of())) {
                children.add(node(child, waiting, blocks, sessions, shown, depth + 1));
            }
        }
        return Html.of(
                "<li><div class=\"node {}\" data-pid=\"{}\"><b>pid {}</b> {}{}</div>{}</li>",
                w == null ? "holder" : "waiter",
                pid,
                pid,
                waits,
                detail,
                children.isEmpty() ? Html.EMPTY : Html.of("<ul>{}</ul>", Html.join(children)));
    }

    private Html slowestResources() {
        Field<OffsetDateTime> since =
                DSL.currentOffsetDateTime().minus(DSL.inline(DayToSecond.valueOf(Duration.ofHours(24))));
        var recent = DSL.select(LOCK_WAIT_EVENT.RESOURCE_ID, LOCK_WAIT_EVENT.WAIT_MS, LOCK_WAIT_EVENT.OUTCOME)
                .from(LOCK_WAIT_EVENT)
                .where(LOCK_WAIT_EVENT.WAIT_START.ge(since))
                .orderBy(LOCK_WAIT_EVENT.WAIT_START.desc())
                .limit(DSL.inline(WAIT_SAMPLE))
                .asTable("recent");
        Field<String> resource = Objects.requireNonNull(recent.field(LOCK_WAIT_EVENT.RESOURCE_ID));
        Field<Long> ms = Objects.requireNonNull(recent.field(LOCK_WAIT_EVENT.WAIT_MS));
        Field<String> outcome = Objects.requireNonNull(recent.field(LOCK_WAIT_EVENT.OUTCOME));
        var rows = reads.run(tx -> tx.select(
                        resource,
                        DSL.count(),
                        DSL.sum(ms),
                        DSL.max(ms),
                        DSL.count().filterWhere(outcome.ne(DSL.inline("acquired"))))
                .from(recent)
                .groupBy(resource)
                .orderBy(DSL.sum(ms).desc(), resource)
                .limit(DSL.inline(LIST))
                .fetch());
        if (rows.isEmpty()) {
            return Html.raw("<p class=\"hint\">No lock waits recorded in the last 24 hours.</p>");
        }
        List<Html> out = new ArrayList<>();
        for (var r : rows) {
            out.add(Html.of(
                    "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                    r.value1(),
                    Format.count(r.value2()),
                    Format.age(Duration.ofMillis(
                            r.value3() == null ? 0 : r.value3().longValue())),
                    Format.age(Duration.ofMillis(r.value4() == null ? 0 : r.value4())),
                    Format.count(r.value5())));
        }
        return Html.of(
                "<table class=\"resources\"><thead><tr><th>resource</th><th>waits</th><th>total wait</th><th>longest</th>"
                        + "<th>not acquired</th></tr></thead><tbody>{}</tbody></table>",
                Html.join(out));
    }

    private Html recentWaits() {
        var rows = reads.run(tx -> tx.selectFrom(LOCK_WAIT_EVENT)
                .orderBy(LOCK_WAIT_EVENT.ID.desc())
                .limit(DSL.inline(LIST))
                .fetch());
        if (rows.isEmpty()) {
            return Html.raw("<p class=\"hint\">No lock waits recorded.</p>");
        }
        List<Html> out = new ArrayList<>();
        for (var r : rows) {
            out.add(Html.of(
                    "<tr><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td><span class=\"outcome {}\">{}</span></td>"
                            + "<td><code>{}</code></td><td><code>{}</code></td><td>{}</td></tr>",
                    Format.time(r.getWaitStart()),
                    r.getResourceId(),
                    Format.age(Duration.ofMillis(r.getWaitMs() == null ? 0 : r.getWaitMs())),
                    r.getOutcome(),
                    r.getOutcome(),
                    r.getWaiterTxnId(),
                    r.getHolderTxnId(),
                    Format.firstLine(r.getDetail(), 200)));
        }
        return Html.of(
                "<table class=\"waits\"><thead><tr><th>started</th><th>resource</th><th>waited</th><th>outcome</th>"
                        + "<th>waiter txn</th><th>holder txn</th><th>detail</th></tr></thead><tbody>{}</tbody></table>",
                Html.join(out));
    }

    private Html deadlocks() {
        var rows = reads.run(tx -> tx.selectFrom(DEADLOCK_EVENT)
                .orderBy(DEADLOCK_EVENT.ID.desc())
                .limit(DSL.inline(LIST))
                .fetch());
        if (rows.isEmpty()) {
            return Html.raw("<p class=\"hint\">No deadlocks recorded.</p>");
        }
        List<Html> out = new ArrayList<>();
        for (var r : rows) {
            String detail = r.getDetail();
            out.add(Html.of(
                    "<tr><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td><pre class=\"detail\">{}</pre></td></tr>",
                    Format.time(r.getDetectedAt()),
                    r.getTxnIds() == null ? "" : r.getTxnIds().data(),
                    r.getVictimTxnId(),
                    detail == null ? "" : detail.length() > DETAIL ? detail.substring(0, DETAIL) + "…" : detail));
        }
        return Html.of(
                "<table class=\"deadlocks\"><thead><tr><th>detected</th><th>transactions</th><th>victim</th><th>detail</th></tr>"
                        + "</thead><tbody>{}</tbody></table>",
                Html.join(out));
    }
}

package dev.locksmith.audit;

import dev.locksmith.Locksmith;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jspecify.annotations.Nullable;

/**
 * Who blocks whom right now, from {@code pg_stat_activity}, {@code pg_locks} and
 * {@code pg_blocking_pids()}. A diagnostic: plain SQL with bind values, read-only, one query for
 * the blocked sessions and one more per blocked session for its blockers. It takes no lock; what
 * it reports may have changed by the time it returns. Seeing other users' sessions in full needs
 * the {@code pg_read_all_stats} role (or superuser); without it their state is null.
 */
public final class BlockingReport {

    private static final int QUERY_TEXT_LIMIT = 1000;

    private final DSLContext dsl;

    /**
     * A report run on {@code locksmith}'s context.
     *
     * @param locksmith the environment: schema, execution mode, observer
     */
    public BlockingReport(Locksmith locksmith) {
        this(locksmith.dsl());
    }

    /**
     * A report reading through {@code dsl}.
     *
     * @param dsl any {@code DSLContext} on the database to inspect; each report borrows one
     *     connection for its queries
     */
    public BlockingReport(DSLContext dsl) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
    }

    /**
     * A blocked session and what it waits for.
     *
     * @param waitingPid the waiting backend
     * @param waiterTxnId its locksmith transaction UUID, if tagged
     * @param blockers the sessions it waits on
     * @param lockType {@code pg_locks.locktype} of the ungranted lock (relation, tuple, transactionid, advisory...)
     * @param mode the lock mode it asked for
     * @param relation the relation, when the lock is on one
     * @param waitingFor how long its current statement has been running (an upper bound on the wait)
     * @param query its statement, truncated to 1,000 characters
     */
    public record BlockedSession(
            int waitingPid,
            Optional<UUID> waiterTxnId,
            List<Blocker> blockers,
            String lockType,
            String mode,
            Optional<String> relation,
            Duration waitingFor,
            String query) {}

    /**
     * A session that blocks another.
     *
     * @param pid its backend
     * @param txnId its locksmith transaction UUID, if tagged
     * @param state {@code pg_stat_activity.state}, e.g. {@code idle in transaction}; null when
     *     the reading role may not see that session's activity
     * @param query its latest statement, truncated to 1,000 characters
     */
    public record Blocker(
            int pid, Optional<UUID> txnId, @Nullable String state, String query) {}

    /**
     * Every session of the current database waiting for a lock that another session holds.
     *
     * @return the blocked sessions, longest-running statement first; empty when nobody waits
     */
    public List<BlockedSession> blockedSessions() {
        List<BlockedSession> result = new ArrayList<>();
        for (Record w : dsl.resultQuery("""
                SELECT w.pid, w.application_name, l.locktype, l.mode, l.relation::regclass::text AS relation,
                       extract(epoch FROM clock_timestamp() - w.query_start) * 1000 AS waiting_ms,
                       left(w.query, ?) AS query, pg_blocking_pids(w.pid) AS blocking
                FROM pg_stat_activity w
                JOIN pg_locks l ON l.pid = w.pid AND NOT l.granted
                WHERE w.datname = current_database() AND cardinality(pg_blocking_pids(w.pid)) > 0
                ORDER BY w.query_start""", QUERY_TEXT_LIMIT).fetch()) {
            Integer[] blocking = w.get("blocking", Integer[].class);
            List<Blocker> blockers = new ArrayList<>();
            for (Record b : dsl.resultQuery(
                            "SELECT pid, application_name, state, left(query, ?) FROM pg_stat_activity WHERE pid = ANY(?)",
                            QUERY_TEXT_LIMIT,
                            blocking)
                    .fetch()) {
                blockers.add(new Blocker(
                        b.get(0, Integer.class),
                        TxnTag.parse(b.get(1, String.class)),
                        b.get(2, String.class),
                        b.get(3, String.class)));
            }
            Number waitingMs = w.get("waiting_ms", Number.class);
            result.add(new BlockedSession(
                    w.get("pid", Integer.class),
                    TxnTag.parse(w.get("application_name", String.class)),
                    List.copyOf(blockers),
                    w.get("locktype", String.class),
                    w.get("mode", String.class),
                    Optional.ofNullable(w.get("relation", String.class)),
                    Duration.ofMillis(waitingMs == null ? 0 : waitingMs.longValue()),
                    w.get("query", String.class)));
        }
        return result;
    }
}

package dev.locksmith.audit;

import static dev.locksmith.codegen.Tables.DEADLOCK_EVENT;
import static dev.locksmith.codegen.Tables.LOCK_WAIT_EVENT;

import dev.locksmith.exception.DeadlockException;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.jooq.Record;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes {@link LockAudit}'s rows on one background thread, from a bounded buffer, so that the
 * caller's thread never borrows an audit connection while it still holds its own (when both
 * come from one pool, that is how errors arrive late and rows get lost). A full buffer drops the
 * row and counts it. Each row is written in its own auto-committed statement on the audit
 * {@code DSLContext}, at most one connection at a time.
 */
final class AuditWriter {

    private static final Logger LOG = LoggerFactory.getLogger(LockAudit.class);
    private static final Pattern BLOCKED_BY = Pattern.compile("Process (\\d+) waits for .*? blocked by process (\\d+)");
    private static final Pattern RELATION = Pattern.compile("relation \"((?:[^\"]|\"\")+)\"");

    /** One finished wait, as the caller saw it. */
    record Wait(
            LockAudit.Tag waiter,
            @Nullable UUID holder,
            String resourceId,
            OffsetDateTime start,
            Duration waited,
            String outcome,
            @Nullable String detail) {}

    private final DSLContext auditDsl;
    private final ThreadPoolExecutor thread;
    private final Object progress = new Object();
    private long queued;
    private long finished;
    private long dropped;

    AuditWriter(DSLContext auditDsl, int bufferSize) {
        this.auditDsl = auditDsl;
        this.thread = new ThreadPoolExecutor(
                1,
                1,
                0,
                TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(bufferSize),
                r -> {
                    Thread t = new Thread(r, "locksmith-lock-audit-writer");
                    t.setDaemon(true);
                    return t;
                },
                (task, executor) -> {
                    throw new RejectedExecutionException("audit buffer full");
                });
    }

    /** Queues a {@code lock_wait_event}. */
    void wait(Wait wait) {
        submit(() -> insert(wait));
    }

    /**
     * Queues a {@code lock_wait_event} for a {@code NOWAIT} failure, whose holder no probe saw
     * (nothing waited): the writer asks {@code pg_locks} first, see {@link #soleHolder}.
     */
    void noWait(Wait wait, int waiterPid, @Nullable String errorMessage) {
        submit(() -> insert(
                wait.holder() != null
                        ? wait
                        : new Wait(
                                wait.waiter(),
                                soleHolder(waiterPid, errorMessage).orElse(null),
                                wait.resourceId(),
                                wait.start(),
                                wait.waited(),
                                wait.outcome(),
                                wait.detail())));
    }

    /** Queues a {@code deadlock_event}. */
    void deadlock(LockAudit.Tag victim, Map<Integer, Optional<UUID>> blockers, DeadlockException e) {
        String detail = detailOf(e);
        submit(() -> insertDeadlock(victim, blockers, detail));
    }

    /** Rows dropped because the buffer was full (or the audit closing). */
    long dropped() {
        synchronized (progress) {
            return dropped;
        }
    }

    /** Waits until every row queued before the call is written (or failed). @return false on timeout */
    boolean flush(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (progress) {
            long target = queued;
            try {
                while (finished < target) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(progress, left);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            return true;
        }
    }

    /** Stops taking rows, writes those queued within {@code grace}, and drops (counts) the rest. */
    void close(Duration grace) {
        thread.shutdown();
        try {
            if (!thread.awaitTermination(grace.toNanos(), TimeUnit.NANOSECONDS)) {
                int abandoned = thread.shutdownNow().size();
                synchronized (progress) {
                    dropped += abandoned;
                }
                LOG.warn("lock audit closed with {} rows unwritten", abandoned);
            }
        } catch (InterruptedException e) {
            thread.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    private void submit(Runnable write) {
        synchronized (progress) {
            queued++;
        }
        try {
            thread.execute(() -> {
                try {
                    write.run();
                } finally {
                    synchronized (progress) {
                        finished++;
                        progress.notifyAll();
                    }
                }
            });
        } catch (RejectedExecutionException full) {
            long count;
            synchronized (progress) {
                queued--;
                count = ++dropped;
            }
            if (Long.bitCount(count) == 1) { // 1st, 2nd, 4th, 8th...: visible, never a flood
                LOG.warn("lock audit buffer full or closed; {} rows dropped so far", count);
            }
        }
    }

    private void insert(Wait w) {
        try {
            auditDsl.insertInto(LOCK_WAIT_EVENT)
                    .set(LOCK_WAIT_EVENT.WAITER_TXN_ID, w.waiter().txnId())
                    .set(LOCK_WAIT_EVENT.HOLDER_TXN_ID, w.holder())
                    .set(LOCK_WAIT_EVENT.RESOURCE_ID, w.resourceId())
                    .set(LOCK_WAIT_EVENT.WAIT_START, w.start())
                    .set(LOCK_WAIT_EVENT.WAIT_END, w.start().plus(w.waited()))
                    .set(LOCK_WAIT_EVENT.OUTCOME, w.outcome())
                    .set(LOCK_WAIT_EVENT.DETAIL, w.detail())
                    .execute();
        } catch (RuntimeException e) {
            LOG.warn("could not record lock wait on {}", w.resourceId(), e);
        }
    }

    /**
     * The holder of the lock a {@code NOWAIT} statement could not take, when {@code pg_locks} can
     * tell: the error names the relation ({@code could not obtain lock on row in relation "x"} or
     * {@code ... on relation "x"}), and a row lock can only be held by a transaction that holds at
     * least {@code RowShareLock} on its table. When exactly one other session holds such a lock
     * (any lock, for a relation-level failure), it is the holder; when several do, or none is
     * tagged, the holder stays unknown rather than guessed.
     */
    @SuppressWarnings("NullAway") // errorMessage is dereferenced only after the RELATION pattern matched it
    private Optional<UUID> soleHolder(int waiterPid, @Nullable String errorMessage) {
        Matcher m = RELATION.matcher(errorMessage == null ? "" : errorMessage);
        if (!m.find()) {
            return Optional.empty();
        }
        String relation = m.group(1).replace("\"\"", "\"");
        boolean rowLock = errorMessage.contains("lock on row");
        try {
            List<Record> holders =
                    auditDsl.resultQuery("""
                    SELECT DISTINCT a.pid, a.application_name
                    FROM pg_locks l
                    JOIN pg_class c ON c.oid = l.relation
                    JOIN pg_stat_activity a ON a.pid = l.pid
                    WHERE l.locktype = 'relation' AND l.granted
                      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                      AND c.relname = ? AND l.pid <> ? AND l.pid <> pg_backend_pid()
                      AND (NOT ? OR l.mode <> 'AccessShareLock')""", relation, waiterPid, rowLock).fetch();
            return holders.size() == 1 ? TxnTag.parse(holders.get(0).get(1, String.class)) : Optional.empty();
        } catch (RuntimeException e) {
            LOG.debug("lock audit could not look up the holder on {}", relation, e);
            return Optional.empty();
        }
    }

    private void insertDeadlock(LockAudit.Tag victim, Map<Integer, Optional<UUID>> blockers, @Nullable String detail) {
        try {
            Set<UUID> txns = new LinkedHashSet<>();
            txns.add(victim.txnId());
            blockers.values().forEach(id -> id.ifPresent(txns::add));
            Set<Integer> pids = new LinkedHashSet<>();
            Matcher m = BLOCKED_BY.matcher(detail == null ? "" : detail);
            while (m.find()) {
                pids.add(Integer.parseInt(m.group(1)));
                pids.add(Integer.parseInt(m.group(2)));
            }
            pids.remove(victim.pid());
            pids.removeAll(blockers.keySet());
            if (!pids.isEmpty()) {
                auditDsl.resultQuery("SELECT application_name FROM pg_stat_activity WHERE pid = ANY(?)", (Object)
                                pids.toArray(Integer[]::new))
                        .fetch()
                        .forEach(r -> TxnTag.parse(r.get(0, String.class)).ifPresent(txns::add));
            }
            List<String> ids = new ArrayList<>();
            txns.forEach(id -> ids.add('"' + id.toString() + '"'));
            auditDsl.insertInto(DEADLOCK_EVENT)
                    .set(DEADLOCK_EVENT.TXN_IDS, JSONB.valueOf("[" + String.join(",", ids) + "]"))
                    .set(DEADLOCK_EVENT.VICTIM_TXN_ID, victim.txnId())
                    .set(DEADLOCK_EVENT.DETAIL, detail)
                    .execute();
        } catch (RuntimeException failure) {
            LOG.warn("could not record deadlock", failure);
        }
    }

    private static @Nullable String detailOf(DeadlockException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof PSQLException psql && psql.getServerErrorMessage() != null) {
                return psql.getServerErrorMessage().getDetail();
            }
            if (t instanceof SQLException sql && sql.getNextException() != null) {
                t = sql.getNextException();
            }
        }
        return e.getMessage();
    }
}

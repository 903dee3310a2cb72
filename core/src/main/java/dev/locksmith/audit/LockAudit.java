package dev.locksmith.audit;

import static dev.locksmith.codegen.Tables.DEADLOCK_EVENT;
import static dev.locksmith.codegen.Tables.LOCK_WAIT_EVENT;

import dev.locksmith.LockWait;
import dev.locksmith.Locksmith;
import dev.locksmith.exception.DeadlockException;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.internal.Durations;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.Texts;
import dev.locksmith.internal.TransactionGuard;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jooq.DSLContext;
import org.jooq.Record2;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.types.DayToSecond;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records lock waits that end badly (lock timeout, {@code NOWAIT} failure), optionally slow
 * waits that succeed, and deadlocks, with who blocked whom.
 *
 * <p><b>Identity.</b> {@link #tag(DSLContext)} gives the caller's transaction a UUID and puts it
 * in {@code application_name} with {@code set_config(..., true)}: other sessions can see it in
 * {@code pg_stat_activity} while the transaction runs, and it reverts when the transaction ends,
 * so nothing leaks through a pool.
 *
 * <p><b>Waits.</b> {@link #guard} runs a locking statement; if it is still waiting after the
 * probe delay, a background probe asks {@code pg_blocking_pids()} (on another connection) which
 * sessions block it and reads their tags. When the statement fails with
 * {@link LockNotAvailableException} a {@code lock_wait_event} is written with waiter, holder,
 * resource, start and end; a {@link DeadlockException} writes a {@code deadlock_event} with every
 * transaction involved (from the probe and from PostgreSQL's "Process N waits for ... blocked by
 * process M" detail) and the victim.
 *
 * <p>A {@code NOWAIT} failure never waits, so no probe sees its holder; the audit then asks
 * {@code pg_locks} which other session holds a lock on the relation named in the error that a
 * row lock needs ({@code RowShareLock} or stronger), and records it as the holder when there is
 * exactly one such session (otherwise the holder stays empty rather than guessed).
 *
 * <p><b>Connections.</b> {@link #guard} never uses {@code auditDsl} on the caller's thread, so it
 * never asks for a second connection while the caller's transaction holds one: when both come
 * from one exhausted pool, that would delay the caller's error by the pool's wait and lose the
 * row. The probe runs on one background thread and the rows are written by another, each in its
 * own auto-committed statement (the failed transaction is aborted), so the audit borrows at most
 * two connections from {@code auditDsl} at a time, and it may share the application's pool.
 * Rows wait in a buffer of {@link LockAuditConfig#bufferSize()} rows; when it is full, further
 * rows are dropped and counted ({@link #droppedRows()}), never waited for. {@link #flush}
 * waits until the rows queued so far are written. Writing them never turns a success into a
 * failure and never hides the original exception: an audit failure is logged and the caller
 * gets exactly what the statement produced.
 *
 * <p>Thread-safe; share one instance and {@linkplain #close() close} it at shutdown.
 */
public final class LockAudit implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LockAudit.class);
    private static final Duration CLOSE_GRACE = Duration.ofSeconds(10);

    private final DSLContext auditDsl;
    private final LockAuditConfig config;
    private final ScheduledExecutorService probes;
    private final AuditWriter writer;
    private volatile boolean closed;

    /**
     * An audit that writes its rows on {@code locksmith}'s context, in transactions of its own.
     *
     * @param locksmith the environment: schema, execution mode, observer
     * @param config thresholds, probe timing and the write buffer
     */
    public LockAudit(Locksmith locksmith, LockAuditConfig config) {
        this(locksmith.dsl(), config);
    }

    /**
     * An audit probing and writing through {@code auditDsl}: a {@code DSLContext} on a pool or
     * data source (it may be the application's own; see the class comment), not a caller's
     * transaction. Starts its two daemon threads.
     *
     * @param auditDsl where probes run and rows are written, each in its own auto-committed
     *     statement; the audit holds at most two of its connections at a time
     * @param config probe timing, slow-wait threshold and buffer size;
     *     {@code LockAuditConfig.builder().build()} for the defaults
     */
    public LockAudit(DSLContext auditDsl, LockAuditConfig config) {
        this.auditDsl = Objects.requireNonNull(auditDsl, "auditDsl");
        this.config = Objects.requireNonNull(config, "config");
        this.writer = new AuditWriter(auditDsl, config.bufferSize());
        this.probes = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "locksmith-lock-audit");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * The transaction's identity as seen by other sessions.
     *
     * @param txnId the UUID in the transaction's {@code application_name}, the id audit rows use
     * @param pid the backend process id of the transaction's connection
     */
    public record Tag(UUID txnId, int pid) {}

    /**
     * Tags the caller's open transaction with a new UUID (or returns the tag it already has).
     * One round trip. Takes no lock; the tag lasts until the transaction ends (it is set with
     * {@code set_config(..., true)}). In auto-commit mode the tag is gone as soon as this returns.
     *
     * @param tx the caller's transaction
     * @return the transaction's tag: the same one for every call in one transaction
     */
    public Tag tag(DSLContext tx) {
        UUID fresh = UUID.randomUUID();
        Record2<Integer, String> row = Errors.translating(() -> tx.select(
                        DSL.field("pg_backend_pid()", SQLDataType.INTEGER),
                        DSL.function(
                                "set_config",
                                SQLDataType.VARCHAR,
                                DSL.val("application_name"),
                                DSL.when(
                                                DSL.function(
                                                                "current_setting",
                                                                SQLDataType.VARCHAR,
                                                                DSL.val("application_name"))
                                                        .startsWith(TxnTag.PREFIX),
                                                DSL.function(
                                                        "current_setting",
                                                        SQLDataType.VARCHAR,
                                                        DSL.val("application_name")))
                                        .otherwise(DSL.val(TxnTag.applicationName(fresh))),
                                DSL.inline(true)))
                .fetchSingle());
        return new Tag(TxnTag.parse(row.value2()).orElse(fresh), row.value1());
    }

    /**
     * Runs {@code lockingStatement} in {@code tx} under {@code wait} (as {@link LockWait#run}),
     * auditing the wait on {@code resourceId} (for example {@code "accounts:42"}).
     *
     * <p>Needs the caller's open transaction whatever the wait: in auto-commit mode the lock
     * would end with the statement, a bound would not hold, and the tag that identifies the
     * waiter would be gone before the statement ran. The audit row is queued, not written, before
     * this returns or throws (see the class comment).
     *
     * <p>The locks the statement takes are the statement's own, held until {@code tx} ends; the
     * audit adds none. While the statement waits, a probe on another connection reads
     * {@code pg_blocking_pids()} every {@link LockAuditConfig#probeInterval()}, from
     * {@link LockAuditConfig#probeDelay()} on.
     *
     * @param <T> what the statement returns
     * @param tx the caller's open transaction
     * @param resourceId what is being locked, recorded in the audit row: 1 to 256 characters
     * @param wait how long the statement may wait for the lock
     * @param lockingStatement runs the locking statement on {@code tx}; called once, on this thread
     * @return what the statement returned
     * @throws dev.locksmith.exception.LocksmithException exactly what the statement threw, after auditing
     * @throws IllegalStateException when {@code tx} is in auto-commit mode, or this audit is
     *     closed; nothing is run then
     */
    // NullAway: blockers.get() is never null; the reference starts at Map.of() and is only set to
    // the map a probe saw. JavaTimeDefaultTimeZone: the start is stored as timestamptz, an
    // instant, so the JVM's zone offset does not change what is recorded.
    @SuppressWarnings({"NullAway", "JavaTimeDefaultTimeZone"})
    public <T extends @Nullable Object> T guard(
            DSLContext tx, String resourceId, LockWait wait, Supplier<T> lockingStatement) {
        Objects.requireNonNull(resourceId, "resourceId");
        if (resourceId.isBlank() || resourceId.length() > 256) {
            throw new IllegalArgumentException("resourceId must be 1 to 256 characters, was '" + resourceId + "'");
        }
        Texts.requireStorable("resourceId", resourceId);
        Objects.requireNonNull(wait, "wait");
        Objects.requireNonNull(lockingStatement, "lockingStatement");
        requireNotClosed();
        TransactionGuard.requireOpen(tx, "LockAudit.guard");
        Tag waiter = tag(tx);
        AtomicReference<Map<Integer, Optional<UUID>>> blockers = new AtomicReference<>(Map.of());
        OffsetDateTime start = OffsetDateTime.now();
        long startNanos = System.nanoTime();
        ScheduledFuture<?> probe;
        try {
            probe = probes.scheduleWithFixedDelay(
                    () -> probe(waiter.pid(), blockers),
                    config.probeDelay().toNanos(),
                    config.probeInterval().toNanos(),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closedMeanwhile) {
            throw closedError();
        }
        try {
            T result = wait.run(tx, lockingStatement);
            probe.cancel(false);
            Duration waited = Duration.ofNanos(System.nanoTime() - startNanos);
            if (config.slowWaitThreshold().filter(t -> waited.compareTo(t) >= 0).isPresent()) {
                writer.wait(new AuditWriter.Wait(
                        waiter, firstHolder(blockers.get()), resourceId, start, waited, "acquired", null));
            }
            return result;
        } catch (LockNotAvailableException e) {
            probe.cancel(false);
            AuditWriter.Wait row = new AuditWriter.Wait(
                    waiter,
                    firstHolder(blockers.get()),
                    resourceId,
                    start,
                    Duration.ofNanos(System.nanoTime() - startNanos),
                    wait.kind() == LockWait.Kind.NO_WAIT ? "nowait" : "timeout",
                    e.getMessage());
            if (wait.kind() == LockWait.Kind.NO_WAIT) {
                writer.noWait(row, waiter.pid(), e.getMessage());
            } else {
                writer.wait(row);
            }
            throw e;
        } catch (DeadlockException e) {
            probe.cancel(false);
            writer.deadlock(waiter, blockers.get(), e);
            throw e;
        } finally {
            probe.cancel(false);
        }
    }

    /**
     * Waits until every audit row queued before this call has been written (or has failed and
     * been logged), at most {@code timeout}.
     *
     * @param timeout how long to wait at most; zero only checks
     * @return whether they all were; false on timeout or interruption (the flag is kept)
     */
    public boolean flush(Duration timeout) {
        return writer.flush(Durations.nonNegative("timeout", timeout));
    }

    /**
     * Audit rows lost to back-pressure, for monitoring: a growing count means the buffer is too
     * small or {@code auditDsl} too slow for the rate of failed waits.
     *
     * @return rows dropped since construction because the buffer was full (or the audit closing)
     */
    public long droppedRows() {
        return writer.dropped();
    }

    /**
     * Deletes audit rows older than {@code age} (by database clock), {@code batchSize} rows per
     * auto-committed statement, so that no statement holds row locks on many rows or runs long.
     * Rows of both tables are deleted; run it from a scheduled job.
     *
     * @param age how old a row must be to go: zero or more; zero deletes every row written before
     *     the statement's start
     * @param batchSize rows per statement, 1 to 100,000
     * @return rows deleted, both tables together
     * @throws IllegalArgumentException when {@code age} is negative or {@code batchSize} out of range
     */
    public int deleteOlderThan(Duration age, int batchSize) {
        Durations.nonNegative("age", age);
        if (batchSize < 1 || batchSize > 100_000) {
            throw new IllegalArgumentException("batchSize must be between 1 and 100000, was " + batchSize);
        }
        var cutoff = DSL.currentOffsetDateTime().minus(DSL.val(DayToSecond.valueOf(age)));
        int total = 0;
        int batch;
        do {
            batch = Errors.translating(() -> auditDsl.deleteFrom(LOCK_WAIT_EVENT)
                    .where(LOCK_WAIT_EVENT.ID.in(auditDsl.select(LOCK_WAIT_EVENT.ID)
                            .from(LOCK_WAIT_EVENT)
                            .where(LOCK_WAIT_EVENT.WAIT_START.lt(cutoff))
                            .limit(batchSize)))
                    .execute());
            total += batch;
        } while (batch == batchSize);
        do {
            batch = Errors.translating(() -> auditDsl.deleteFrom(DEADLOCK_EVENT)
                    .where(DEADLOCK_EVENT.ID.in(auditDsl.select(DEADLOCK_EVENT.ID)
                            .from(DEADLOCK_EVENT)
                            .where(DEADLOCK_EVENT.DETECTED_AT.lt(cutoff))
                            .limit(batchSize)))
                    .execute());
            total += batch;
        } while (batch == batchSize);
        return total;
    }

    /**
     * Stops the probe thread, writes the rows still queued (for up to 10 seconds; any left then
     * are dropped and counted) and stops the writer thread. Later {@link #guard} calls fail with
     * {@link IllegalStateException}. Safe to call twice.
     */
    @Override
    public void close() {
        closed = true;
        probes.shutdownNow();
        writer.close(CLOSE_GRACE);
    }

    private void requireNotClosed() {
        if (closed) {
            throw closedError();
        }
    }

    private static IllegalStateException closedError() {
        return new IllegalStateException("this LockAudit is closed; guard needs an open one");
    }

    // ------------------------------------------------------------------ internals

    private void probe(int waiterPid, AtomicReference<Map<Integer, Optional<UUID>>> blockers) {
        try {
            Map<Integer, Optional<UUID>> seen = new LinkedHashMap<>();
            auditDsl.resultQuery(
                            "SELECT pid, application_name FROM pg_stat_activity WHERE pid = ANY(pg_blocking_pids(?))",
                            waiterPid)
                    .fetch()
                    .forEach(r -> seen.put(r.get(0, Integer.class), TxnTag.parse(r.get(1, String.class))));
            if (!seen.isEmpty()) {
                blockers.set(seen);
            }
        } catch (RuntimeException e) {
            LOG.debug("lock audit probe failed", e);
        }
    }

    private static @Nullable UUID firstHolder(Map<Integer, Optional<UUID>> blockers) {
        return blockers.values().stream().flatMap(Optional::stream).findFirst().orElse(null);
    }
}

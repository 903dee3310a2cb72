package dev.locksmith.audit;

import static dev.locksmith.codegen.Tables.DEADLOCK_EVENT;
import static dev.locksmith.codegen.Tables.LOCK_WAIT_EVENT;

import dev.locksmith.DeadlockException;
import dev.locksmith.LockNotAvailableException;
import dev.locksmith.LockWait;
import dev.locksmith.PgErrors;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.jooq.Record2;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.types.DayToSecond;
import org.postgresql.util.PSQLException;
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
 * <p>Audit rows are written on {@code auditDsl} in their own short transaction, because the
 * failed transaction is aborted. Writing them never turns a success into a failure and never
 * hides the original exception: an audit failure is logged and the caller gets exactly what the
 * statement produced.
 */
public final class LockAudit implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LockAudit.class);
    private static final Pattern BLOCKED_BY = Pattern.compile("Process (\\d+) waits for .*? blocked by process (\\d+)");

    private final DSLContext auditDsl;
    private final LockAuditConfig config;
    private final ScheduledExecutorService probes;

    /** An audit writing through {@code auditDsl} (a pool, not a caller's transaction). */
    public LockAudit(DSLContext auditDsl, LockAuditConfig config) {
        this.auditDsl = Objects.requireNonNull(auditDsl, "auditDsl");
        this.config = Objects.requireNonNull(config, "config");
        this.probes = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "locksmith-lock-audit");
            t.setDaemon(true);
            return t;
        });
    }

    /** The transaction's identity as seen by other sessions. */
    public record Tag(UUID txnId, int pid) {
    }

    /**
     * Tags the caller's open transaction with a new UUID (or returns the tag it already has).
     * One round trip.
     */
    public Tag tag(DSLContext tx) {
        UUID fresh = UUID.randomUUID();
        Record2<Integer, String> row = PgErrors.translating(() -> tx.select(
                DSL.field("pg_backend_pid()", SQLDataType.INTEGER),
                DSL.function("set_config", SQLDataType.VARCHAR, DSL.val("application_name"),
                        DSL.when(DSL.function("current_setting", SQLDataType.VARCHAR, DSL.val("application_name"))
                                        .startsWith(TxnTag.PREFIX),
                                DSL.function("current_setting", SQLDataType.VARCHAR, DSL.val("application_name")))
                                .otherwise(DSL.val(TxnTag.applicationName(fresh))),
                        DSL.inline(true)))
                .fetchSingle());
        return new Tag(TxnTag.parse(row.value2()).orElse(fresh), row.value1());
    }

    /**
     * Runs {@code lockingStatement} in {@code tx} under {@code wait} (as {@link LockWait#run}),
     * auditing the wait on {@code resourceId} (for example {@code "accounts:42"}).
     *
     * @return what the statement returned
     * @throws dev.locksmith.LocksmithException exactly what the statement threw, after auditing
     */
    public <T> T guard(DSLContext tx, String resourceId, LockWait wait, Supplier<T> lockingStatement) {
        Objects.requireNonNull(resourceId, "resourceId");
        if (resourceId.isBlank() || resourceId.length() > 256) {
            throw new IllegalArgumentException("resourceId must be 1 to 256 characters, was '" + resourceId + "'");
        }
        Objects.requireNonNull(wait, "wait");
        Tag waiter = tag(tx);
        AtomicReference<Map<Integer, Optional<UUID>>> blockers = new AtomicReference<>(Map.of());
        OffsetDateTime start = OffsetDateTime.now();
        long startNanos = System.nanoTime();
        ScheduledFuture<?> probe = probes.scheduleWithFixedDelay(() -> probe(waiter.pid(), blockers),
                config.probeDelay().toNanos(), config.probeInterval().toNanos(), TimeUnit.NANOSECONDS);
        try {
            T result = wait.run(tx, lockingStatement);
            probe.cancel(false);
            Duration waited = Duration.ofNanos(System.nanoTime() - startNanos);
            if (config.slowWaitThreshold().filter(t -> waited.compareTo(t) >= 0).isPresent()) {
                writeWait(waiter, firstHolder(blockers.get()), resourceId, start, waited, "acquired", null);
            }
            return result;
        } catch (LockNotAvailableException e) {
            probe.cancel(false);
            String outcome = wait.kind() == LockWait.Kind.NO_WAIT ? "nowait" : "timeout";
            writeWait(waiter, firstHolder(blockers.get()), resourceId, start,
                    Duration.ofNanos(System.nanoTime() - startNanos), outcome, e.getMessage());
            throw e;
        } catch (DeadlockException e) {
            probe.cancel(false);
            writeDeadlock(waiter, blockers.get(), e);
            throw e;
        } finally {
            probe.cancel(false);
        }
    }

    /** Deletes audit rows older than {@code age}, {@code batchSize} rows per statement. @return rows deleted */
    public int deleteOlderThan(Duration age, int batchSize) {
        Objects.requireNonNull(age, "age");
        if (age.isNegative()) {
            throw new IllegalArgumentException("age must not be negative, was " + age);
        }
        if (batchSize < 1 || batchSize > 100_000) {
            throw new IllegalArgumentException("batchSize must be between 1 and 100000, was " + batchSize);
        }
        var cutoff = DSL.currentOffsetDateTime().minus(DSL.val(DayToSecond.valueOf(age)));
        int total = 0;
        int batch;
        do {
            batch = PgErrors.translating(() -> auditDsl.deleteFrom(LOCK_WAIT_EVENT).where(LOCK_WAIT_EVENT.ID.in(
                    auditDsl.select(LOCK_WAIT_EVENT.ID).from(LOCK_WAIT_EVENT).where(LOCK_WAIT_EVENT.WAIT_START.lt(cutoff))
                            .limit(batchSize))).execute());
            total += batch;
        } while (batch == batchSize);
        do {
            batch = PgErrors.translating(() -> auditDsl.deleteFrom(DEADLOCK_EVENT).where(DEADLOCK_EVENT.ID.in(
                    auditDsl.select(DEADLOCK_EVENT.ID).from(DEADLOCK_EVENT).where(DEADLOCK_EVENT.DETECTED_AT.lt(cutoff))
                            .limit(batchSize))).execute());
            total += batch;
        } while (batch == batchSize);
        return total;
    }

    /** Stops the probe thread. */
    @Override
    public void close() {
        probes.shutdownNow();
    }

    // ------------------------------------------------------------------ internals

    private void probe(int waiterPid, AtomicReference<Map<Integer, Optional<UUID>>> blockers) {
        try {
            Map<Integer, Optional<UUID>> seen = new java.util.LinkedHashMap<>();
            auditDsl.resultQuery("SELECT pid, application_name FROM pg_stat_activity WHERE pid = ANY(pg_blocking_pids(?))",
                    waiterPid).fetch().forEach(r -> seen.put(r.get(0, Integer.class), TxnTag.parse(r.get(1, String.class))));
            if (!seen.isEmpty()) {
                blockers.set(seen);
            }
        } catch (RuntimeException e) {
            LOG.debug("locksmith: lock audit probe failed: {}", e.toString());
        }
    }

    private static UUID firstHolder(Map<Integer, Optional<UUID>> blockers) {
        return blockers.values().stream().flatMap(Optional::stream).findFirst().orElse(null);
    }

    private void writeWait(Tag waiter, UUID holder, String resourceId, OffsetDateTime start, Duration waited,
            String outcome, String detail) {
        try {
            auditDsl.insertInto(LOCK_WAIT_EVENT)
                    .set(LOCK_WAIT_EVENT.WAITER_TXN_ID, waiter.txnId())
                    .set(LOCK_WAIT_EVENT.HOLDER_TXN_ID, holder)
                    .set(LOCK_WAIT_EVENT.RESOURCE_ID, resourceId)
                    .set(LOCK_WAIT_EVENT.WAIT_START, start)
                    .set(LOCK_WAIT_EVENT.WAIT_END, start.plus(waited))
                    .set(LOCK_WAIT_EVENT.OUTCOME, outcome)
                    .set(LOCK_WAIT_EVENT.DETAIL, detail)
                    .execute();
        } catch (RuntimeException e) {
            LOG.warn("locksmith: could not record lock wait on {}: {}", resourceId, e.toString());
        }
    }

    private void writeDeadlock(Tag victim, Map<Integer, Optional<UUID>> blockers, DeadlockException e) {
        try {
            Set<UUID> txns = new LinkedHashSet<>();
            txns.add(victim.txnId());
            blockers.values().forEach(id -> id.ifPresent(txns::add));
            String detail = detailOf(e);
            Set<Integer> pids = new LinkedHashSet<>();
            Matcher m = BLOCKED_BY.matcher(detail == null ? "" : detail);
            while (m.find()) {
                pids.add(Integer.parseInt(m.group(1)));
                pids.add(Integer.parseInt(m.group(2)));
            }
            pids.remove(victim.pid());
            pids.removeAll(blockers.keySet());
            if (!pids.isEmpty()) {
                auditDsl.resultQuery("SELECT application_name FROM pg_stat_activity WHERE pid = ANY(?)",
                        (Object) pids.toArray(Integer[]::new)).fetch()
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
            LOG.warn("locksmith: could not record deadlock: {}", failure.toString());
        }
    }

    private static String detailOf(DeadlockException e) {
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

package dev.locksmith;

import dev.locksmith.internal.TransactionIdentity;
import java.time.Duration;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record2;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * Finds out whether a transaction whose connection died during {@code COMMIT} committed.
 * Before {@code COMMIT}, {@link #identify} notes the transaction id ({@code xid8}) and the
 * backend pid in one round trip; afterwards {@link #resolve} asks a new connection
 * {@code pg_xact_status}. A transaction still "in progress" after a short grace belongs to a
 * backend that has not noticed its client is gone (a lost COMMIT, a network partition): if
 * that backend still runs the transaction, it is terminated, which settles the outcome either
 * way (an uncommitted transaction aborts; one already committing completes).
 */
final class CommitResolver {

    /** What a transaction became. */
    enum Outcome {
        COMMITTED,
        ABORTED,
        UNKNOWN
    }

    private static final Duration POLL = Duration.ofMillis(20);
    private static final Duration GRACE_BEFORE_TERMINATE = Duration.ofMillis(500);

    private CommitResolver() {}

    /** The running transaction's id (only if it has one: read-only work gets none) and backend pid. */
    static TransactionIdentity identify(DSLContext tx) {
        Record2<String, Integer> row = tx.select(
                        DSL.function("pg_current_xact_id_if_assigned", Object.class)
                                .cast(SQLDataType.VARCHAR),
                        DSL.function("pg_backend_pid", SQLDataType.INTEGER))
                .fetchSingle();
        return new TransactionIdentity(row.value1() == null ? null : Long.valueOf(row.value1()), row.value2());
    }

    /**
     * Polls {@code pg_xact_status} on a connection of {@code dsl} (a new one: the old is dead)
     * until the outcome is known or {@code timeout} has passed. Failures of the look-up itself
     * are added to {@code failure} as suppressed and do not end the polling early.
     */
    @SuppressWarnings("NullAway") // identity.xid() is not null: Transactions asks only about a transaction with an id
    static Outcome resolve(DSLContext dsl, TransactionIdentity identity, Duration timeout, Throwable failure) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        boolean terminated = false;
        RuntimeException lastLookupFailure = null;
        while (true) {
            try {
                String status = dsl.select(DSL.function("pg_xact_status", String.class, xid8(identity.xid())))
                        .fetchSingle()
                        .value1();
                lastLookupFailure = null;
                if ("committed".equals(status)) {
                    return Outcome.COMMITTED;
                }
                if ("aborted".equals(status)) {
                    return Outcome.ABORTED;
                }
                if (status == null) {
                    return Outcome.UNKNOWN; // too old for the commit log: cannot happen this soon, but say so
                }
                if (!terminated && System.nanoTime() - start >= GRACE_BEFORE_TERMINATE.toNanos()) {
                    terminated = true;
                    terminateIfStillRunning(dsl, identity);
                }
            } catch (RuntimeException lookupFailed) {
                lastLookupFailure = lookupFailed;
            }
            if (System.nanoTime() >= deadline || !pause()) {
                if (lastLookupFailure != null) {
                    failure.addSuppressed(lastLookupFailure);
                }
                return Outcome.UNKNOWN;
            }
        }
    }

    /**
     * Terminates the backend only if it still runs this very transaction: pids are reused, so
     * the 32-bit {@code backend_xid} must match the low half of the {@code xid8} too.
     */
    @SuppressWarnings("NullAway") // identity.xid() is not null: see resolve
    private static void terminateIfStillRunning(DSLContext dsl, TransactionIdentity identity) {
        Field<Integer> pid = DSL.field(DSL.name("pid"), SQLDataType.INTEGER);
        Field<String> backendXid =
                DSL.field(DSL.name("backend_xid"), Object.class).cast(SQLDataType.VARCHAR);
        String lowXid = Long.toString(identity.xid() & 0xFFFF_FFFFL);
        dsl.select(DSL.function("pg_terminate_backend", Boolean.class, pid))
                .from(DSL.table(DSL.name("pg_catalog", "pg_stat_activity")))
                .where(pid.eq(identity.pid()).and(backendXid.eq(lowXid)))
                .fetch();
    }

    private static Field<Object> xid8(long xid) {
        return DSL.field("{0}::xid8", Object.class, DSL.val(Long.toString(xid)));
    }

    private static boolean pause() {
        try {
            Thread.sleep(POLL.toMillis());
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}

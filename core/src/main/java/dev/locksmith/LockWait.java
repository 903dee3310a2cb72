package dev.locksmith;

import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.TransactionGuard;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.Record3;
import org.jooq.SelectForStep;
import org.jooq.SelectForUpdateWaitStep;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;

/**
 * How long a locking statement may wait for a row lock another transaction holds. One value
 * type used by every repository.
 *
 * <ul>
 *   <li>{@link #forever()}: wait until the holder ends (subject only to whatever
 *       {@code lock_timeout} the session or role already has; locksmith issues nothing);</li>
 *   <li>{@link #upTo(Duration)}: wait at most that long, then fail with
 *       {@link LockNotAvailableException}. Implemented with a transaction-scoped
 *       {@code set_config('lock_timeout', ..., true)} around the locking statement and put
 *       back to its previous value after it, so neither later statements of the transaction
 *       nor the pooled connection afterwards see it;</li>
 *   <li>{@link #noWait()}: {@code NOWAIT}, fail at once with {@link LockNotAvailableException};</li>
 *   <li>{@link #skipLocked()}: {@code SKIP LOCKED}, silently pass over locked rows (so a lookup
 *       of one row returns empty when it is locked).</li>
 * </ul>
 *
 * <p>A failed lock wait aborts the caller's transaction, as any PostgreSQL error does.
 *
 * <p><b>Citus.</b> On a Citus coordinator the row locks are taken on the worker nodes, where
 * {@code set_config} does not reach; a bounded wait there sends {@code SET LOCAL lock_timeout}
 * with Citus's {@code citus.propagate_set_commands} set to {@code local} for that statement, and
 * the same to put it back: three more statements than on one server (one more when
 * propagation is already {@code local}). The first statement tells
 * which case applies, so a single server pays nothing for it.
 *
 * <p><b>Auto-commit.</b> A bounded wait needs the caller's open transaction: in auto-commit mode
 * {@code set_config(..., true)} would be a transaction of its own and be gone before the locking
 * statement ran, so the wait would silently be unbounded. {@link #run} therefore refuses a
 * bounded wait on an auto-commit connection with {@link IllegalStateException} (no statement is
 * sent). The other kinds need no setting and behave the same in both modes. Repositories whose
 * locks are meant to last until the caller's transaction ends (row locks, transaction-scoped
 * advisory locks, {@code LockAudit.guard}) refuse auto-commit for every kind.
 */
public final class LockWait {

    /** The four kinds of wait. */
    public enum Kind {
        /** Wait as long as it takes. */
        FOREVER,
        /** Wait up to a bound, then fail. */
        BOUNDED,
        /** Fail at once if the lock is held. */
        NO_WAIT,
        /** Skip rows whose lock is held. */
        SKIP_LOCKED
    }

    private static final LockWait FOREVER = new LockWait(Kind.FOREVER, null);
    private static final LockWait NO_WAIT = new LockWait(Kind.NO_WAIT, null);
    private static final LockWait SKIP_LOCKED = new LockWait(Kind.SKIP_LOCKED, null);

    private final Kind kind;
    private final @Nullable Duration bound;

    private LockWait(Kind kind, @Nullable Duration bound) {
        this.kind = kind;
        this.bound = bound;
    }

    /**
     * Wait until the lock is free, however long the holder keeps it.
     *
     * @return the wait that sets no bound of its own (a {@code lock_timeout} the session or role
     *     already has still applies)
     */
    public static LockWait forever() {
        return FOREVER;
    }

    /**
     * Wait at most {@code bound} (rounded up to whole milliseconds; PostgreSQL's resolution).
     *
     * @param bound the longest wait for one locking statement: more than zero and at most
     *     {@link Integer#MAX_VALUE} milliseconds (about 24.8 days, {@code lock_timeout}'s limit)
     * @return a bounded wait; when the bound runs out the statement fails with
     *     {@link LockNotAvailableException} and the transaction is aborted
     * @throws IllegalArgumentException if the bound is not positive or too long
     */
    public static LockWait upTo(Duration bound) {
        Objects.requireNonNull(bound, "bound");
        if (bound.isNegative() || bound.isZero()) {
            throw new IllegalArgumentException("lock wait bound must be positive, was " + bound);
        }
        if (bound.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException(
                    "lock wait bound must be at most " + Integer.MAX_VALUE + " ms (PostgreSQL's limit), was " + bound);
        }
        return new LockWait(Kind.BOUNDED, bound);
    }

    /**
     * Fail at once when the lock is held ({@code NOWAIT}).
     *
     * @return the wait that never waits: a held lock fails the statement with
     *     {@link LockNotAvailableException} and aborts the transaction
     */
    public static LockWait noWait() {
        return NO_WAIT;
    }

    /**
     * Skip locked rows ({@code SKIP LOCKED}): the statement sees only rows it can lock at once,
     * which is what a queue consumer wants and a read of one particular row does not.
     *
     * @return the wait that never waits and never fails on a held lock
     */
    public static LockWait skipLocked() {
        return SKIP_LOCKED;
    }

    /** {@return which kind of wait this is} */
    public Kind kind() {
        return kind;
    }

    /** {@return the bound of a {@link Kind#BOUNDED} wait, as given; empty for the other kinds} */
    public Optional<Duration> bound() {
        return Optional.ofNullable(bound);
    }

    /**
     * The bound in whole milliseconds, rounded up: the value given to {@code lock_timeout}.
     *
     * @return at least 1 and at most {@link Integer#MAX_VALUE}
     * @throws IllegalStateException when this is not a {@link Kind#BOUNDED} wait
     */
    public long boundMillis() {
        Duration bound = this.bound;
        if (bound == null) {
            throw new IllegalStateException(this + " has no bound: boundMillis() is only for LockWait.upTo(...)");
        }
        long millis = bound.toMillis();
        return bound.minusMillis(millis).isZero() ? millis : millis + 1;
    }

    /**
     * Adds this wait's clause to a {@code FOR UPDATE}/{@code FOR NO KEY UPDATE}/{@code FOR SHARE}
     * select: {@code NOWAIT}, {@code SKIP LOCKED}, or nothing (forever and bounded waits).
     * Rendering only; a bounded wait also needs {@link #run} around the statement, which is what
     * sets the bound.
     *
     * @param <R> the select's record type
     * @param select a select with its locking clause ({@code forUpdate()}, {@code forShare()},
     *     ...), not yet executed
     * @return the same select, with the wait's clause when it has one
     */
    public <R extends Record> SelectForStep<R> applyTo(SelectForUpdateWaitStep<R> select) {
        switch (kind) {
            case NO_WAIT:
                return select.noWait();
            case SKIP_LOCKED:
                return select.skipLocked();
            default:
                return select;
        }
    }

    /**
     * Runs a locking statement in {@code tx} under this wait. For a bounded wait the
     * transaction's {@code lock_timeout} is set for the statement and put back afterwards
     * (both with {@code set_config(..., true)}, so nothing outlives the transaction); other
     * kinds run the statement as it is. Database errors come back translated.
     *
     * <p>For a bounded wait this costs two extra round trips (setting and restoring the timeout;
     * on Citus, three more: see the class comment).
     * The bound applies to each lock the statement waits for, not to the statement as a whole.
     *
     * @param <T> what the statement returns
     * @param tx the caller's transaction, the one the statement runs in
     * @param lockingStatement runs the locking statement on {@code tx}; called once, on this
     *     thread, with the wait's setting in force
     * @return what {@code lockingStatement} returned
     * @throws LockNotAvailableException when a {@code NOWAIT} found a lock held or the bound ran
     *     out; the transaction is aborted
     * @throws LocksmithException any other database error of the statement, translated
     * @throws IllegalStateException for a bounded wait when {@code tx} is in auto-commit mode
     *     (the bound could not hold there; see the class comment), before anything is sent
     */
    public <T extends @Nullable Object> T run(DSLContext tx, Supplier<T> lockingStatement) {
        Objects.requireNonNull(tx, "tx");
        Objects.requireNonNull(lockingStatement, "lockingStatement");
        if (kind != Kind.BOUNDED) {
            return Errors.translating(lockingStatement);
        }
        TransactionGuard.requireOpen(tx, this + " (a transaction-scoped lock_timeout)");
        return Errors.translating(() -> {
            String bound = boundMillis() + "ms";
            Record3<String, String, String> previous = tx.select(
                            DSL.function("current_setting", SQLDataType.VARCHAR, DSL.val("lock_timeout")),
                            setLocal("lock_timeout", bound),
                            DSL.function(
                                    "current_setting",
                                    SQLDataType.VARCHAR,
                                    DSL.val(CITUS_PROPAGATION),
                                    DSL.inline(true)))
                    .fetchSingle();
            String propagation = previous.value3();
            if (propagation == null) {
                T result = lockingStatement.get();
                tx.select(setLocal("lock_timeout", previous.value1())).fetchSingle();
                return result;
            }
            // Citus is loaded: set_config() stays on the coordinator, and the row locks are taken
            // on the workers. Only a SET LOCAL statement with propagation on reaches them (also
            // the connections to workers that this transaction opened already).
            boolean switchOn = !"local".equals(propagation);
            if (switchOn) {
                tx.select(setLocal(CITUS_PROPAGATION, "local")).fetchSingle();
            }
            setLocalStatement(tx, bound);
            T result = lockingStatement.get();
            setLocalStatement(tx, previous.value1());
            if (switchOn) {
                tx.select(setLocal(CITUS_PROPAGATION, propagation)).fetchSingle();
            }
            return result;
        });
    }

    /** The Citus setting that decides whether {@code SET LOCAL} reaches the workers. */
    private static final String CITUS_PROPAGATION = "citus.propagate_set_commands";

    /** {@code SET LOCAL lock_timeout = '...'}: SET takes no bind parameters, jOOQ renders an escaped literal. */
    private static void setLocalStatement(DSLContext tx, String lockTimeout) {
        tx.setLocal(DSL.name("lock_timeout"), DSL.inline(lockTimeout)).execute();
    }

    private static org.jooq.Field<String> setLocal(String setting, String value) {
        return DSL.function("set_config", SQLDataType.VARCHAR, DSL.val(setting), DSL.val(value), DSL.inline(true));
    }

    @Override
    public boolean equals(@Nullable Object other) {
        return other instanceof LockWait that && kind == that.kind && Objects.equals(bound, that.bound);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, bound);
    }

    @Override
    public String toString() {
        return kind == Kind.BOUNDED ? "LockWait.upTo(" + bound + ")" : "LockWait." + kind;
    }
}

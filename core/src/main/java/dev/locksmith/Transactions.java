package dev.locksmith;

import dev.locksmith.exception.CommitOutcomeUnknownException;
import dev.locksmith.exception.ConnectionTerminatedException;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.exception.PgErrors;
import dev.locksmith.internal.CheckedFailure;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.Observing;
import dev.locksmith.internal.Sleeper;
import dev.locksmith.internal.TransactionIdentity;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import org.jooq.Configuration;
import org.jooq.DSLContext;
import org.jooq.TransactionalCallable;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a whole jOOQ transaction and runs it again, from the start, when it fails with a
 * failure the {@link RetryPolicy} retries (deadlock, serialization failure, optionally lock
 * timeout). Every attempt is a fresh transaction; the body must be safe to run again, so it
 * should do nothing outside the database that it cannot repeat.
 *
 * <h2>What a failure means</h2>
 * <ul>
 *   <li>The method returns normally: the transaction committed.</li>
 *   <li>{@link CommitOutcomeUnknownException}: the connection failed while {@code COMMIT} was in
 *       flight and the outcome could not be established. The work may have committed; it is
 *       never retried.</li>
 *   <li>Any other {@link LocksmithException}: the transaction did not commit.</li>
 *   <li>The body's own exception (checked or unchecked, exactly as thrown): the attempt rolled
 *       back and nothing is retried. Only database errors are translated and retried; a
 *       checked {@link SQLException} the body throws counts as a database error.</li>
 * </ul>
 *
 * <p>When the connection fails during {@code COMMIT}, a {@code COMMIT} may have been applied
 * even though the client never heard back. Before sending {@code COMMIT}, each attempt notes
 * the transaction id ({@code pg_current_xact_id_if_assigned()}) and backend pid, in one extra
 * round trip (none when a statement of the body returned them, as the library's transfers do);
 * after such a failure a new connection asks {@code pg_xact_status} for up to
 * {@link RetryPolicy.Builder#commitResolution(Duration) the policy's commit resolution} (5 s by default): committed
 * means success (the body's result is returned), aborted means the failure stands (and it is
 * retried only if the policy retries it), anything else is
 * {@link CommitOutcomeUnknownException}. A transaction that wrote nothing has no id and
 * nothing to lose: a failed {@code COMMIT} then reports the connection failure.
 *
 * <p>Use it where the transaction begins: called inside an open transaction, jOOQ would nest
 * a savepoint, and retrying a savepoint cannot repair a serialization failure of the
 * enclosing transaction.
 *
 * <p><b>Citus.</b> Citus runs each worker's part of a distributed transaction at that worker's
 * own isolation: a SERIALIZABLE transaction that reads or writes distributed tables on several
 * workers is not serializable as a whole. The first SERIALIZABLE transaction of an instance
 * looks once whether the database is a Citus coordinator (one catalog read) and, if so, logs a
 * WARN; the transaction still runs, since it may touch only the coordinator's own tables.
 * ({@code Accounts} refuses its SERIALIZABLE transfers there.)
 *
 * <p>Thread-safe; share one instance.
 */
public final class Transactions {

    /**
     * The work of one attempt, run inside the transaction.
     *
     * @param <T> what it returns
     * @param <X> the checked exception it may throw (inferred; {@code RuntimeException} when none)
     */
    @FunctionalInterface
    public interface Work<T extends @Nullable Object, X extends Exception> {
        /**
         * Does the work.
         *
         * @param transaction the attempt's transaction: use {@code transaction.dsl()} for every
         *     statement that must commit with it
         * @return the result, returned by {@link Transactions#run} once the attempt commits
         * @throws X to roll the attempt back and leave {@code run} with this exception
         */
        T run(Configuration transaction) throws X;
    }

    private final DSLContext dsl;
    private final RetryPolicy policy;
    private final Sleeper sleeper;
    private final RetryListener listener;
    private final Duration commitResolution;
    private final Observing observing;
    /** Whether the database is a Citus coordinator; null until a SERIALIZABLE transaction asks. */
    private volatile @Nullable Boolean citus;

    private static final Logger LOG = LoggerFactory.getLogger(Transactions.class);

    /**
     * Transactions in {@code locksmith}'s environment (its observer is told of retries), retried with {@code policy}.
     *
     * @param locksmith the environment: schema, execution mode, observer
     * @param policy attempts, backoff and which failures are retried
     */
    public Transactions(Locksmith locksmith, RetryPolicy policy) {
        this(locksmith.dsl(), policy);
    }

    /**
     * Runs transactions on {@code dsl} under {@code policy}.
     *
     * @param dsl where transactions start: each attempt is {@code dsl.transactionResult(...)}, so
     *     the configuration's transaction provider, listeners and settings apply
     * @param policy how many attempts, on which failures, with which pauses, and how long a
     *     failed {@code COMMIT}'s outcome is looked for
     */
    public Transactions(DSLContext dsl, RetryPolicy policy) {
        this(dsl, policy, Sleeper.THREAD_SLEEP);
    }

    /** With a sleeper of the test's choosing, so that tests never sleep. */
    Transactions(DSLContext dsl, RetryPolicy policy, Sleeper sleeper) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
        this.listener = policy.listener();
        this.commitResolution = policy.commitResolution();
        this.observing = Observing.of(dsl);
    }

    /**
     * The policy in force.
     *
     * @return the policy given at construction
     */
    public RetryPolicy policy() {
        return policy;
    }

    /**
     * Runs {@code body} in a READ COMMITTED transaction, retrying under the policy: the same as
     * {@link #run(Isolation, Work) run(Isolation.READ_COMMITTED, body)}.
     *
     * @param <T> what the body returns
     * @param <X> the checked exception the body may throw
     * @param body the work of one attempt; may run several times, each time in a new transaction
     * @return what the committed attempt returned
     * @throws CommitOutcomeUnknownException when the connection failed during {@code COMMIT}
     *     and the outcome could not be established (never retried)
     * @throws LocksmithException the translated failure of the last attempt, when it was not
     *     retryable or no attempts were left; the transaction did not commit
     * @throws X the body's own exception, unchanged; the attempt rolled back
     */
    public <T extends @Nullable Object, X extends Exception> T run(Work<T, X> body) throws X {
        return run(Isolation.READ_COMMITTED, body);
    }

    /**
     * Runs {@code body} in a transaction at {@code isolation}, retrying under the policy.
     *
     * <p>Each attempt holds one connection from {@code dsl}'s provider for its duration, and the
     * locks its statements take until it commits or rolls back. Between attempts it sleeps on the
     * calling thread for the policy's backoff; an interrupt during that pause ends the loop with
     * the last failure (the interrupt flag is kept).
     *
     * @param <T> what the body returns
     * @param <X> the checked exception the body may throw
     * @param isolation the isolation level of every attempt; REPEATABLE READ and SERIALIZABLE
     *     need {@link RetryPolicy.Failure#SERIALIZATION_FAILURE} retried (the default) to be useful
     * @param body the work of one attempt; may run several times, each time in a new transaction
     * @return what the committed attempt returned
     * @throws CommitOutcomeUnknownException when the connection failed during {@code COMMIT}
     *     and the outcome could not be established (never retried)
     * @throws LocksmithException the translated failure of the last attempt, when it was not
     *     retryable or no attempts were left; the transaction did not commit
     * @throws X the body's own exception, unchanged; the attempt rolled back
     */
    public <T extends @Nullable Object, X extends Exception> T run(Isolation isolation, Work<T, X> body) throws X {
        Objects.requireNonNull(isolation, "isolation");
        Objects.requireNonNull(body, "body");
        if (isolation == Isolation.SERIALIZABLE && citus == null) {
            warnIfCitus();
        }
        for (int attempt = 1; ; attempt++) {
            Attempt<T, X> current = new Attempt<>(isolation, body, !commitResolution.isZero());
            try {
                return dsl.transactionResult(current);
            } catch (CheckedFailure own) {
                throw current.rethrowOwn(own);
            } catch (RuntimeException e) {
                if (!Errors.isDatabaseError(e)) {
                    throw e;
                }
                LocksmithException failure = PgErrors.translate(e);
                observing.lockFailed(failure);
                if (current.commitSent && outcomeUncertain(failure)) {
                    CommitResolver.Outcome outcome = outcomeOf(current.identity, failure);
                    if (outcome == CommitResolver.Outcome.COMMITTED) {
                        return current.result;
                    }
                    if (outcome == CommitResolver.Outcome.UNKNOWN) {
                        throw unknown(current, failure);
                    }
                }
                if (attempt >= policy.maxAttempts() || !policy.isRetryable(failure)) {
                    throw failure;
                }
                Duration pause =
                        policy.backoff(attempt, ThreadLocalRandom.current().nextDouble());
                listener.onRetry(attempt, failure, pause);
                observing.retried(attempt, failure);
                try {
                    sleeper.sleep(pause);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    failure.addSuppressed(interrupted);
                    throw failure;
                }
            }
        }
    }

    /** Looks once whether the database is a Citus coordinator, and says what SERIALIZABLE means there. */
    private void warnIfCitus() {
        boolean found;
        try {
            found = Boolean.TRUE.equals(dsl.select(
                            DSL.field("to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL", SQLDataType.BOOLEAN))
                    .fetchSingle()
                    .value1());
        } catch (RuntimeException notKnown) {
            return; // asked again by the next SERIALIZABLE transaction; this one is not held up
        }
        citus = found;
        if (found) {
            LOG.warn("SERIALIZABLE transactions on a Citus coordinator are serializable only per node: Citus runs "
                    + "each worker's part of a distributed transaction at that worker's own isolation, so "
                    + "transactions over distributed tables on several workers can both commit from stale reads "
                    + "(docs/citus.md); said once per Transactions object");
        }
    }

    /** What became of a transaction whose COMMIT failed with {@code failure}, as far as can be found out. */
    private CommitResolver.Outcome outcomeOf(@Nullable TransactionIdentity identity, LocksmithException failure) {
        if (commitResolution.isZero() || identity == null) {
            return CommitResolver.Outcome.UNKNOWN; // not looked up, so no identity was noted either
        }
        if (identity.xid() == null) {
            return CommitResolver.Outcome.ABORTED; // it wrote nothing: there was nothing to commit
        }
        return CommitResolver.resolve(dsl, identity, commitResolution, failure);
    }

    /** A connection failure (or a failure without SQLState) says nothing about a COMMIT already sent. */
    private static boolean outcomeUncertain(LocksmithException failure) {
        return failure instanceof ConnectionTerminatedException || failure.sqlState() == null;
    }

    private static CommitOutcomeUnknownException unknown(Attempt<?, ?> attempt, LocksmithException failure) {
        Long xid = attempt.identity == null ? null : attempt.identity.xid();
        String message = "the connection failed during COMMIT and the outcome is unknown"
                + (xid == null ? "" : " (transaction id " + xid + "; pg_xact_status tells once the server can)")
                + ": " + failure.getMessage();
        return new CommitOutcomeUnknownException(message, failure.sqlState(), xid, failure);
    }

    /**
     * One attempt: the isolation statement, the body, then (when resolution is on) the
     * transaction's identity, noted just before jOOQ sends {@code COMMIT}. Anything that fails
     * after {@code commitSent} failed in {@code COMMIT} itself (or in a commit listener).
     */
    private static final class Attempt<T, X extends Exception> implements TransactionalCallable<T> {
        private final Isolation isolation;
        private final Work<T, X> body;
        private final boolean identify;
        private volatile boolean commitSent;
        private volatile @Nullable TransactionIdentity identity;
        /** Set before {@code commitSent}, and read only after it. */
        @SuppressWarnings("NullAway.Init")
        private volatile T result;

        Attempt(Isolation isolation, Work<T, X> body, boolean identify) {
            this.isolation = isolation;
            this.body = body;
            this.identify = identify;
        }

        @Override
        public T run(Configuration configuration) throws Exception {
            if (isolation.statement() != null) {
                configuration.dsl().execute(isolation.statement());
            }
            T value;
            TransactionIdentity.clear();
            try {
                value = body.run(configuration);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception checked) {
                if (checked instanceof SQLException) {
                    throw checked; // a database error: jOOQ wraps it, and it is translated and retried as such
                }
                throw new CheckedFailure(checked);
            }
            TransactionIdentity reported = TransactionIdentity.take();
            if (identify) {
                // A statement of the body may have returned it already (the library's transfers
                // do); only a report from this transaction's own backend counts, since the body
                // may also have used other connections.
                identity = reported != null && reported.pid() == backendPid(configuration)
                        ? reported
                        : CommitResolver.identify(configuration.dsl());
            }
            result = value;
            commitSent = true;
            return value;
        }

        /** The backend pid of the transaction's connection, from the driver (no round trip); -1 if unknown. */
        private static int backendPid(Configuration configuration) {
            try {
                return configuration
                        .dsl()
                        .connectionResult(connection -> connection
                                .unwrap(org.postgresql.PGConnection.class)
                                .getBackendPID());
            } catch (RuntimeException notPgJdbc) {
                return -1;
            }
        }

        @SuppressWarnings("unchecked")
        X rethrowOwn(CheckedFailure own) throws X {
            Exception cause = own.checked();
            for (Throwable suppressed : own.getSuppressed()) {
                cause.addSuppressed(suppressed);
            }
            throw (X) cause;
        }
    }
}

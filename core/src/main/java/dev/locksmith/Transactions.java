package dev.locksmith;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import dev.locksmith.internal.CheckedFailure;
import dev.locksmith.internal.TransactionIdentity;
import org.jooq.Configuration;
import org.jooq.DSLContext;
import org.jooq.TransactionalCallable;

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
 * {@link #DEFAULT_COMMIT_RESOLUTION} (see {@link #withCommitResolution(Duration)}): committed
 * means success (the body's result is returned), aborted means the failure stands (and it is
 * retried only if the policy retries it), anything else is
 * {@link CommitOutcomeUnknownException}. A transaction that wrote nothing has no id and
 * nothing to lose: a failed {@code COMMIT} then reports the connection failure.
 *
 * <p>Use it where the transaction begins: called inside an open transaction, jOOQ would nest
 * a savepoint, and retrying a savepoint cannot repair a serialization failure of the
 * enclosing transaction.
 *
 * <p>Thread-safe; share one instance.
 */
public final class Transactions {

    /** How long a failed {@code COMMIT}'s outcome is looked for by default: 5 seconds. */
    public static final Duration DEFAULT_COMMIT_RESOLUTION = Duration.ofSeconds(5);

    /**
     * The work of one attempt, run inside the transaction.
     *
     * @param <T> what it returns
     * @param <X> the checked exception it may throw (inferred; {@code RuntimeException} when none)
     */
    @FunctionalInterface
    public interface Work<T, X extends Exception> {
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

    /** Observes retries, for metrics and tests. */
    @FunctionalInterface
    public interface RetryListener {
        /**
         * Called before the pause that precedes attempt {@code failedAttempts + 1}.
         *
         * @param failedAttempts attempts that failed so far (1-based)
         * @param failure the translated failure of the last attempt
         * @param pause how long the loop will sleep now
         */
        void onRetry(int failedAttempts, LocksmithException failure, Duration pause);
    }

    /** Pauses between attempts; replaceable so that tests never sleep. */
    @FunctionalInterface
    public interface Sleeper {
        /** The real thing: {@link Thread#sleep(long, int)}. */
        Sleeper THREAD_SLEEP = pause -> Thread.sleep(pause.toMillis(), pause.toNanosPart() % 1_000_000);

        /** Sleeps for {@code pause}. */
        void sleep(Duration pause) throws InterruptedException;
    }

    private static final RetryListener NO_LISTENER = (attempts, failure, pause) -> { };
    private static final Duration MAX_COMMIT_RESOLUTION = Duration.ofHours(1);

    private final DSLContext dsl;
    private final RetryPolicy policy;
    private final Sleeper sleeper;
    private final RetryListener listener;
    private final Duration commitResolution;

    /** Runs transactions on {@code dsl} under {@code policy}, sleeping with {@link Thread#sleep}. */
    public Transactions(DSLContext dsl, RetryPolicy policy) {
        this(dsl, policy, Sleeper.THREAD_SLEEP, NO_LISTENER);
    }

    /** Full control over sleeping and retry observation. */
    public Transactions(DSLContext dsl, RetryPolicy policy, Sleeper sleeper, RetryListener listener) {
        this(dsl, policy, sleeper, listener, DEFAULT_COMMIT_RESOLUTION);
    }

    private Transactions(DSLContext dsl, RetryPolicy policy, Sleeper sleeper, RetryListener listener,
            Duration commitResolution) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.commitResolution = commitResolution;
    }

    /**
     * Fails with {@link IllegalStateException} unless {@code tx} is inside an open transaction.
     * Operations of several statements that promise to commit with the caller call this first:
     * in auto-commit mode they would commit halfway. Costs no round trip.
     *
     * @param operation named in the message
     */
    public static void requireOpen(DSLContext tx, String operation) {
        boolean autoCommit = PgErrors.translating(() -> tx.connectionResult(java.sql.Connection::getAutoCommit));
        if (autoCommit) {
            throw new IllegalStateException(operation + " needs the caller's open transaction "
                    + "(call it inside dsl.transaction(...)); the connection is in auto-commit mode");
        }
    }

    /** The policy in force. */
    public RetryPolicy policy() {
        return policy;
    }

    /** A copy that reports retries to {@code listener}. */
    public Transactions withListener(RetryListener listener) {
        return new Transactions(dsl, policy, sleeper, listener, commitResolution);
    }

    /**
     * A copy that looks for the outcome of a {@code COMMIT} whose connection failed for up to
     * {@code timeout} (default {@link #DEFAULT_COMMIT_RESOLUTION}). {@link Duration#ZERO} turns
     * the look-up off, and with it the extra round trip before each {@code COMMIT}: such a
     * failure is then always {@link CommitOutcomeUnknownException}.
     *
     * @param timeout zero to one hour
     */
    public Transactions withCommitResolution(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.compareTo(MAX_COMMIT_RESOLUTION) > 0) {
            throw new IllegalArgumentException("timeout must be between 0 and " + MAX_COMMIT_RESOLUTION + ", was " + timeout);
        }
        return new Transactions(dsl, policy, sleeper, listener, timeout);
    }

    /** Runs {@code body} in a READ COMMITTED transaction, retrying under the policy. */
    public <T, X extends Exception> T run(Work<T, X> body) throws X {
        return run(Isolation.READ_COMMITTED, body);
    }

    /**
     * Runs {@code body} in a transaction at {@code isolation}, retrying under the policy.
     *
     * @return what the committed attempt returned
     * @throws CommitOutcomeUnknownException when the connection failed during {@code COMMIT}
     *     and the outcome could not be established (never retried)
     * @throws LocksmithException the translated failure of the last attempt, when it was not
     *     retryable or no attempts were left; the transaction did not commit
     * @throws X the body's own exception, unchanged; the attempt rolled back
     */
    public <T, X extends Exception> T run(Isolation isolation, Work<T, X> body) throws X {
        Objects.requireNonNull(isolation, "isolation");
        Objects.requireNonNull(body, "body");
        for (int attempt = 1; ; attempt++) {
            Attempt<T, X> current = new Attempt<>(isolation, body, !commitResolution.isZero());
            try {
                return dsl.transactionResult(current);
            } catch (CheckedFailure own) {
                throw current.rethrowOwn(own);
            } catch (RuntimeException e) {
                if (!PgErrors.isDatabaseError(e)) {
                    throw e;
                }
                LocksmithException failure = PgErrors.translate(e);
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
                Duration pause = policy.backoff(attempt, ThreadLocalRandom.current().nextDouble());
                listener.onRetry(attempt, failure, pause);
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

    /** What became of a transaction whose COMMIT failed with {@code failure}, as far as can be found out. */
    private CommitResolver.Outcome outcomeOf(TransactionIdentity identity, LocksmithException failure) {
        if (commitResolution.isZero()) {
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
        private volatile TransactionIdentity identity;
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
                        ? reported : CommitResolver.identify(configuration.dsl());
            }
            result = value;
            commitSent = true;
            return value;
        }

        /** The backend pid of the transaction's connection, from the driver (no round trip); -1 if unknown. */
        private static int backendPid(Configuration configuration) {
            try {
                return configuration.dsl().connectionResult(
                        connection -> connection.unwrap(org.postgresql.PGConnection.class).getBackendPID());
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

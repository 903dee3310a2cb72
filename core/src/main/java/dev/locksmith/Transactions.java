package dev.locksmith;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import org.jooq.DSLContext;
import org.jooq.TransactionalCallable;

/**
 * Runs a whole jOOQ transaction and runs it again, from the start, when it fails with a
 * failure the {@link RetryPolicy} retries (deadlock, serialization failure, optionally lock
 * timeout). Every attempt is a fresh transaction; the body must be safe to run again, so it
 * should do nothing outside the database that it cannot repeat.
 *
 * <p>Database failures leave as {@link LocksmithException} subclasses; any other runtime
 * exception the body throws rolls the attempt back and leaves unchanged, without a retry.
 *
 * <p>Use it where the transaction begins: called inside an open transaction, jOOQ would nest
 * a savepoint, and retrying a savepoint cannot repair a serialization failure of the
 * enclosing transaction.
 *
 * <p>Thread-safe; share one instance.
 */
public final class Transactions {

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

    private final DSLContext dsl;
    private final RetryPolicy policy;
    private final Sleeper sleeper;
    private final RetryListener listener;

    /** Runs transactions on {@code dsl} under {@code policy}, sleeping with {@link Thread#sleep}. */
    public Transactions(DSLContext dsl, RetryPolicy policy) {
        this(dsl, policy, Sleeper.THREAD_SLEEP, NO_LISTENER);
    }

    /** Full control over sleeping and retry observation. */
    public Transactions(DSLContext dsl, RetryPolicy policy, Sleeper sleeper, RetryListener listener) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
        this.listener = Objects.requireNonNull(listener, "listener");
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
        return new Transactions(dsl, policy, sleeper, listener);
    }

    /** Runs {@code body} in a READ COMMITTED transaction, retrying under the policy. */
    public <T> T run(TransactionalCallable<T> body) {
        return run(Isolation.READ_COMMITTED, body);
    }

    /**
     * Runs {@code body} in a transaction at {@code isolation}, retrying under the policy.
     *
     * @return what the successful attempt returned
     * @throws LocksmithException the translated failure of the last attempt, when it was not
     *     retryable or no attempts were left
     */
    public <T> T run(Isolation isolation, TransactionalCallable<T> body) {
        Objects.requireNonNull(isolation, "isolation");
        Objects.requireNonNull(body, "body");
        for (int attempt = 1; ; attempt++) {
            try {
                return dsl.transactionResult(configuration -> {
                    if (isolation.statement() != null) {
                        configuration.dsl().execute(isolation.statement());
                    }
                    return body.run(configuration);
                });
            } catch (RuntimeException e) {
                if (!PgErrors.isDatabaseError(e)) {
                    throw e;
                }
                LocksmithException failure = PgErrors.translate(e);
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
}

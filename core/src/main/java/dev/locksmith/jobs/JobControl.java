package dev.locksmith.jobs;

import dev.locksmith.internal.Durations;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a handler asks the worker to do with its job instead of completing it: thrown from the
 * handler of any of the three workers ({@link JobHandler}, {@link BatchJobHandler}, or
 * {@link TwoPhaseJobHandler#handleInTransaction}).
 *
 * <pre>{@code
 * JobHandler handler = (job, tx) -> {
 *     if (!rateLimiter.tryAcquire()) {
 *         throw JobControl.snooze(Duration.ofSeconds(30));      // not now; the attempt is not counted
 *     }
 *     Response r = client.send(job.payload());
 *     if (r.status() == 429) {
 *         throw JobControl.retryAfter(r.retryAfter(), "rate limited by the provider"); // custom backoff
 *     }
 *     if (r.status() == 400) {
 *         throw JobControl.failPermanently("rejected: " + r.body()); // no further attempts
 *     }
 *     if (r.status() == 410) {
 *         throw JobControl.cancel("recipient deleted");           // not a failure: nothing to do
 *     }
 * };
 * }</pre>
 *
 * <p>Like any exception from a handler, it rolls back what the handler wrote through the
 * transaction: the job is then written back in the state the control asks for, in a transaction
 * of its own ({@link JobWorker}) or under the claim's transaction after rolling back to a
 * savepoint ({@link TransactionalWorker}; a batch handler that throws one for a batch of several
 * jobs rolls the whole batch back, and the worker hands its next jobs to the handler one at a time,
 * as after a failure, so that the control reaches the job it was meant for). {@code last_error}
 * keeps the reason of a retry, a permanent failure or a cancellation; a snooze leaves it as it was.
 * A job keeps its ordering key through all four, so a snoozed or retried keyed job still holds
 * back the jobs of its key that came after it.
 *
 * <p>The worker finds a control within the first ten causes of what the handler threw (a framework
 * between the handler and the worker may have wrapped it). Controls carry no stack trace: they are
 * decisions, not errors, and cost nothing to throw.
 */
public final class JobControl extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** What the handler asks for. */
    public enum Action {
        /**
         * Run again after {@link #delay()}, {@code pending} until then; the attempt is not counted,
         * so a job may be snoozed any number of times.
         */
        SNOOZE,
        /**
         * A failed attempt, retried after {@link #delay()} instead of the queue's backoff; failed
         * for good when it was the last of {@code max_attempts}.
         */
        RETRY,
        /** Failed for good ({@code failed}) whatever attempts are left. */
        FAIL,
        /** {@code cancelled}: finished, but not failed. */
        CANCEL
    }

    /** What the handler asks for. */
    private final Action action;

    /** How long a snoozed or retried job waits. */
    private final Duration delay;

    /** Kept in {@code last_error}. */
    private final String reason;

    private JobControl(Action action, Duration delay, String reason, @Nullable Throwable cause) {
        super(
                action.name().toLowerCase(java.util.Locale.ROOT) + (reason.isEmpty() ? "" : ": " + reason),
                cause,
                false,
                false);
        this.action = action;
        this.delay = delay;
        this.reason = reason;
    }

    /**
     * Runs the job again after {@code delay} without counting this attempt.
     *
     * @param delay how long from now (the database clock) the job waits; zero or more
     * @return the control to throw
     * @throws IllegalArgumentException when {@code delay} is negative
     */
    public static JobControl snooze(Duration delay) {
        return new JobControl(Action.SNOOZE, Durations.nonNegative("delay", delay), "", null);
    }

    /**
     * Counts this attempt as failed and retries after {@code delay} rather than the queue's
     * {@link JobQueueConfig#retryBackoff() backoff}; fails the job for good when it was the last attempt.
     *
     * @param delay how long from now (the database clock) until the retry; zero or more
     * @param reason why, kept in {@code last_error}; not null
     * @return the control to throw
     * @throws IllegalArgumentException when {@code delay} is negative
     */
    public static JobControl retryAfter(Duration delay, String reason) {
        return new JobControl(
                Action.RETRY, Durations.nonNegative("delay", delay), Objects.requireNonNull(reason, "reason"), null);
    }

    /**
     * Counts this attempt as failed because of {@code cause} and retries after {@code delay}.
     *
     * @param delay how long from now (the database clock) until the retry; zero or more
     * @param cause the failure, whose stack trace {@code last_error} keeps (as for a handler that throws it)
     * @return the control to throw
     * @throws IllegalArgumentException when {@code delay} is negative
     */
    public static JobControl retryAfter(Duration delay, Throwable cause) {
        Objects.requireNonNull(cause, "cause");
        return new JobControl(
                Action.RETRY,
                Durations.nonNegative("delay", delay),
                dev.locksmith.internal.ErrorTexts.describe(cause),
                cause);
    }

    /**
     * Fails the job for good, whatever attempts it has left.
     *
     * @param reason why, kept in {@code last_error}; not null
     * @return the control to throw
     */
    public static JobControl failPermanently(String reason) {
        return new JobControl(Action.FAIL, Duration.ZERO, Objects.requireNonNull(reason, "reason"), null);
    }

    /**
     * Fails the job for good because of {@code cause}, whatever attempts it has left.
     *
     * @param cause the failure, whose stack trace {@code last_error} keeps
     * @return the control to throw
     */
    public static JobControl failPermanently(Throwable cause) {
        Objects.requireNonNull(cause, "cause");
        return new JobControl(Action.FAIL, Duration.ZERO, dev.locksmith.internal.ErrorTexts.describe(cause), cause);
    }

    /**
     * Cancels the job: {@code cancelled}, finished without having failed.
     *
     * @param reason why, kept in {@code last_error}; not null
     * @return the control to throw
     */
    public static JobControl cancel(String reason) {
        return new JobControl(Action.CANCEL, Duration.ZERO, Objects.requireNonNull(reason, "reason"), null);
    }

    /** {@return what the handler asks for} */
    public Action action() {
        return action;
    }

    /** {@return how long a snoozed or retried job waits; zero for the other actions} */
    public Duration delay() {
        return delay;
    }

    /** {@return why, as kept in {@code last_error}; empty for a snooze} */
    public String reason() {
        return reason;
    }
}

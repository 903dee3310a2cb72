package dev.locksmith.observe;

import dev.locksmith.exception.LocksmithException;
import dev.locksmith.jobs.Job;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Told what locksmith's repositories and workers do, for metrics and traces. Every method has a
 * default that does nothing: implement what you need. locksmith calls it on the thread doing the
 * work, in the middle of it, so it must be quick; what it throws is logged (at DEBUG, logger
 * {@code dev.locksmith.observe}) and otherwise ignored, never failing the operation.
 *
 * <p>Observers are part of the {@link dev.locksmith.Locksmith} environment that repositories
 * and workers are built from; each reads it once, at construction:
 *
 * <pre>{@code
 * Locksmith locksmith = Locksmith.builder(dataSource).observer(metrics, tracing).build();
 * JobQueue queue = new JobQueue(locksmith);
 * JobWorker worker = JobWorker.builder(queue, "emails", handler).build();
 * }</pre>
 */
public interface LocksmithObserver {

    /** Observes nothing. */
    LocksmithObserver NONE = new LocksmithObserver() {};

    /**
     * An operation starts. locksmith ends the returned observation exactly once, on this thread.
     *
     * @param operation what starts
     * @return what to tell when it ends; {@link Observation#NONE} by default
     */
    default Observation start(Operation operation) {
        return Observation.NONE;
    }

    /**
     * Jobs were inserted by {@code JobQueue.enqueue} or {@code enqueueAll} (in the caller's
     * transaction: counted when the insert ran, whether or not it commits). Live duplicates of a
     * unique key, which insert nothing, are not counted.
     *
     * @param queue their queue
     * @param kind their kind
     * @param count how many, at least 1
     */
    default void jobsEnqueued(String queue, String kind, int count) {}

    /**
     * Something happened to one job.
     *
     * @param event what happened
     * @param job the job, as the caller held it (for {@link JobEvent#CLAIMED}, as claimed)
     */
    default void jobEvent(JobEvent event, Job job) {}

    /**
     * A worker's loop did something worth counting: its LISTEN connection is up, a claim came back
     * short, a waiting thread woke (and why).
     *
     * @param event what happened
     * @param queue the worker's queue
     */
    default void workerEvent(WorkerEvent event, String queue) {}

    /**
     * {@code JobQueue.rescueExpired} took back jobs whose lease had expired.
     *
     * @param queue their queue
     * @param toPending how many went back to {@code pending}
     * @param toFailed how many had used their last attempt and went to {@code failed}
     */
    default void jobsRescued(String queue, int toPending, int toFailed) {}

    /**
     * A transaction of {@code Transactions} (and so of {@code Accounts.transfer}) or an
     * optimistic compare-and-swap round failed and is about to be tried again.
     *
     * @param failedAttempts attempts that failed so far
     * @param failure why the last one failed
     */
    default void retried(int failedAttempts, LocksmithException failure) {}

    /**
     * A statement of locksmith's failed on a lock: a {@link dev.locksmith.exception.DeadlockException} or a
     * {@link dev.locksmith.exception.LockNotAvailableException} (a bounded wait that ran out, or
     * {@code NOWAIT}). Reported once per failure, whether it is retried or not.
     *
     * @param failure the deadlock or the lock timeout
     */
    default void lockFailed(LocksmithException failure) {}

    /**
     * The trace context to store with jobs being enqueued now, so that the handler can continue
     * the trace: a W3C {@code traceparent} header value. A value of another shape is not stored
     * (it is logged at DEBUG and the jobs are enqueued without one): the column's CHECK
     * constraint would refuse it, failing the enqueue.
     *
     * @return the current context's {@code traceparent}, or null (the default) for none
     */
    default @Nullable String traceparent() {
        return null;
    }

    /**
     * One observer that tells each of {@code observers}, in order.
     *
     * @param observers the observers; none is allowed (the result observes nothing)
     * @return an observer forwarding every call; {@link #traceparent()} is the first non-null one
     */
    static LocksmithObserver all(LocksmithObserver... observers) {
        List<LocksmithObserver> list = List.of(observers);
        return list.size() == 1 ? list.get(0) : new Composite(list);
    }
}

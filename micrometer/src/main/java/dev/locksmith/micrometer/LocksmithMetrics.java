package dev.locksmith.micrometer;

import dev.locksmith.exception.DeadlockException;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.jobs.Job;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import dev.locksmith.observe.WorkerEvent;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Counts and times what locksmith's repositories and workers do, as a {@link LocksmithObserver}
 * bound to a Micrometer {@link MeterRegistry}. Give it to the {@code Locksmith} environment the
 * repositories and workers are built in:
 *
 * <pre>{@code
 * LocksmithMetrics metrics = new LocksmithMetrics();
 * metrics.bindTo(registry);                              // Spring Boot does this for a MeterBinder bean
 * Locksmith locksmith = Locksmith.builder(dataSource).observer(metrics).build();
 * JobQueue queue = new JobQueue(locksmith);
 * JobWorker worker = JobWorker.builder(queue, "emails", handler).build();
 * }</pre>
 *
 * <p>Counters: {@code locksmith.jobs.inserted} (counted when an enqueue's {@code INSERT} runs,
 * in the producer's transaction: one that rolls back is counted too, so measure a backlog with the
 * depth gauges, not as inserted minus completed), {@code .claimed}, {@code .completed} (a worker's
 * jobs once their completion committed),
 * {@code .retried} (an attempt failed, the job runs again), {@code .failed} (for good),
 * {@code .lease.lost} (once per lease), {@code .released}, {@code .snoozed} and
 * {@code .cancelled}, each tagged {@code queue} and {@code kind};
 * {@code locksmith.worker.wakeups} ({@code queue}, {@code reason}: {@code notification},
 * {@code poll} or {@code internal}); {@code locksmith.jobs.rescued} ({@code queue}, {@code outcome} {@code pending} or
 * {@code failed}); {@code locksmith.retries} ({@code reason}: {@code deadlock},
 * {@code serialization_failure}, {@code lock_not_available}, {@code optimistic_conflict},
 * {@code other}); {@code locksmith.locks.deadlocks}, {@code locksmith.locks.timeouts} and
 * {@code locksmith.pool.acquire.timeouts}, untagged.
 *
 * <p>Timers, each tagged {@code outcome} (an {@link Outcome#tag()}, or {@code error} when the
 * operation threw): {@code locksmith.jobs.claim} ({@code queue}), {@code locksmith.jobs.handler}
 * ({@code queue}, {@code kind}), {@code locksmith.jobs.complete} and {@code locksmith.jobs.fail}
 * ({@code queue}), {@code locksmith.transfers} ({@code strategy}), {@code locksmith.pool.acquire},
 * and {@code locksmith.locks.wait} ({@code table}; its outcome is {@code timeout} for a lock not
 * available, {@code deadlock} for a deadlock victim). Durations come from the registry's clock.
 *
 * <p>Meters are registered on first use of their tags and then found without allocating. Queue
 * and kind names become tag values: keep them a fixed set. Counts are taken when the statement
 * returned, inside the caller's transaction where there is one: a rollback afterwards does not
 * take them back (a job claimed by a transactional batch that rolls back is claimed, and counted,
 * again).
 *
 * <p>Thread-safe. Before {@link #bindTo(MeterRegistry)} every call is ignored.
 */
public final class LocksmithMetrics implements LocksmithObserver, MeterBinder {

    private volatile @Nullable Meters meters;

    /** Metrics that record nothing until bound to a registry. */
    public LocksmithMetrics() {}

    /**
     * Registers the untagged counters in {@code registry} and records into it from now on; tagged
     * meters are registered there when first needed. Binding again to the same registry does
     * nothing.
     *
     * @param registry where to record; to report to several, bind a {@code CompositeMeterRegistry}
     * @throws IllegalStateException when already bound to another registry
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        Meters bound = meters;
        if (bound != null) {
            if (bound.registry != registry) {
                throw new IllegalStateException("LocksmithMetrics is bound to another registry already; bind one "
                        + "CompositeMeterRegistry to report to several");
            }
            return;
        }
        meters = new Meters(registry);
    }

    /**
     * Starts timing {@code operation}.
     *
     * @param operation what starts
     * @return a timing that records into the operation's timer when it ends; {@link Observation#NONE}
     *     before {@link #bindTo(MeterRegistry)}
     */
    @Override
    public Observation start(Operation operation) {
        Meters bound = meters;
        return bound == null ? Observation.NONE : new Timing(bound, operation, bound.clock.monotonicTime());
    }

    /**
     * Counts jobs inserted: {@code locksmith.jobs.inserted}, when the insert runs.
     *
     * @param queue their queue
     * @param kind their kind
     * @param count how many
     */
    @Override
    public void jobsEnqueued(String queue, String kind, int count) {
        Meters bound = meters;
        if (bound != null) {
            bound.queue(queue).kind(kind).enqueued(count);
        }
    }

    /**
     * Counts one job event in the counter of its name ({@code locksmith.jobs.claimed}, ...).
     *
     * @param event what happened
     * @param job the job, for its queue and kind
     */
    @Override
    public void jobEvent(JobEvent event, Job job) {
        Meters bound = meters;
        if (bound != null) {
            bound.queue(job.queue()).kind(job.kind()).event(event);
        }
    }

    /**
     * Counts an idle worker thread's wake-up: {@code locksmith.worker.wakeups} with the reason.
     *
     * @param event what the worker did
     * @param queue the worker's queue
     */
    @Override
    public void workerEvent(WorkerEvent event, String queue) {
        Meters bound = meters;
        if (bound != null) {
            bound.queue(queue).workerEvent(event);
        }
    }

    /**
     * Counts rescued jobs: {@code locksmith.jobs.rescued}.
     *
     * @param queue their queue
     * @param toPending how many went back to pending
     * @param toFailed how many failed for good
     */
    @Override
    public void jobsRescued(String queue, int toPending, int toFailed) {
        Meters bound = meters;
        if (bound != null) {
            bound.queue(queue).rescued(toPending, toFailed);
        }
    }

    /**
     * Counts a retry: {@code locksmith.retries} with the failure's reason.
     *
     * @param failedAttempts attempts failed so far (not a tag)
     * @param failure why the last one failed
     */
    @Override
    public void retried(int failedAttempts, LocksmithException failure) {
        Meters bound = meters;
        if (bound != null) {
            bound.retried(failure);
        }
    }

    /**
     * Counts a deadlock ({@code locksmith.locks.deadlocks}) or a lock not available
     * ({@code locksmith.locks.timeouts}).
     *
     * @param failure the failure
     */
    @Override
    public void lockFailed(LocksmithException failure) {
        Meters bound = meters;
        if (bound != null) {
            bound.lockFailed(failure);
        }
    }

    /** One operation being timed. */
    private static final class Timing implements Observation {
        private final Meters meters;
        private final Operation operation;
        private final long start;

        Timing(Meters meters, Operation operation, long start) {
            this.meters = meters;
            this.operation = operation;
            this.start = start;
        }

        @Override
        public void end(Outcome outcome) {
            meters.timed(operation, ByOutcome.slot(outcome), meters.clock.monotonicTime() - start);
        }

        @Override
        public void error(Throwable error) {
            int slot = ByOutcome.ERROR;
            if (operation instanceof Operation.LockRows) {
                if (error instanceof LockNotAvailableException) {
                    slot = ByOutcome.TIMEOUT;
                } else if (error instanceof DeadlockException) {
                    slot = ByOutcome.DEADLOCK;
                }
            }
            meters.timed(operation, slot, meters.clock.monotonicTime() - start);
        }
    }
}

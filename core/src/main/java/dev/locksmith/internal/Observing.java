package dev.locksmith.internal;

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
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.WeakHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The observer a repository or worker was built with, called so that it can never fail the
 * operation (what it throws is logged at DEBUG), and not at all, without allocating, when there
 * is none. Also keeps the once-only promises of {@link LocksmithObserver}: a lease lost is
 * reported once per lease, a lock failure once per exception.
 */
public final class Observing {

    private static final Logger LOG = LoggerFactory.getLogger("dev.locksmith.observe");

    /** Lock failures already reported, by identity (exceptions do not override equals). */
    private static final Set<Throwable> REPORTED_LOCK_FAILURES =
            Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    private static final int REMEMBERED_LOST_LEASES = 4096;

    /** What {@code jobs.traceparent}'s CHECK constraint ({@code jobs_traceparent_shape}) accepts. */
    private static final Pattern TRACEPARENT = Pattern.compile("[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");

    private final LocksmithObserver observer;
    private final boolean enabled;

    /** Lease ids reported lost, the most recent few thousand. */
    private final Map<UUID, Boolean> lostLeases = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, false) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<UUID, Boolean> eldest) {
            return size() > REMEMBERED_LOST_LEASES;
        }
    });

    private Observing(LocksmithObserver observer) {
        this.observer = observer;
        this.enabled = observer != LocksmithObserver.NONE;
    }

    /**
     * The observer {@code dsl} carries.
     *
     * @param dsl the context a repository or worker is built with
     * @return its observer, made safe to call
     */
    public static Observing of(DSLContext dsl) {
        return new Observing(Environment.of(dsl).observer());
    }

    /** {@return whether there is an observer to tell} */
    public boolean enabled() {
        return enabled;
    }

    /** {@return the observer itself} */
    public LocksmithObserver observer() {
        return observer;
    }

    /**
     * Starts an observation.
     *
     * @param operation what starts
     * @return the observation, safe to end; {@link Observation#NONE} when there is no observer
     */
    public Observation start(Operation operation) {
        if (!enabled) {
            return Observation.NONE;
        }
        try {
            Observation started = observer.start(operation);
            return new Observation() {
                @Override
                public void end(Outcome outcome) {
                    try {
                        started.end(outcome);
                    } catch (RuntimeException e) {
                        ignored(e);
                    }
                }

                @Override
                public void error(Throwable error) {
                    if (error instanceof LocksmithException failure) {
                        lockFailed(failure);
                    }
                    try {
                        started.error(error);
                    } catch (RuntimeException e) {
                        ignored(e);
                    }
                }

                @Override
                public @Nullable String traceparent() {
                    try {
                        return started.traceparent();
                    } catch (RuntimeException e) {
                        ignored(e);
                        return null;
                    }
                }
            };
        } catch (RuntimeException e) {
            ignored(e);
            return Observation.NONE;
        }
    }

    /**
     * Runs {@code body} as {@code operation}: started before, ended with the outcome {@code body}'s
     * result maps to, or with what it threw.
     *
     * @param <T> the result type
     * @param operation built only when there is an observer
     * @param body the work
     * @param outcome what a result comes to
     * @return what {@code body} returned
     */
    public <T> T observe(Supplier<Operation> operation, Supplier<T> body, Function<? super T, Outcome> outcome) {
        if (!enabled) {
            return body.get();
        }
        Observation observation = start(operation.get());
        T result;
        try {
            result = body.get();
        } catch (RuntimeException | Error e) {
            observation.error(e);
            throw e;
        }
        observation.end(outcome.apply(result));
        return result;
    }

    /**
     * Reports jobs inserted.
     *
     * @param queue their queue
     * @param kind their kind
     * @param count how many
     */
    public void jobsEnqueued(String queue, String kind, int count) {
        if (enabled && count > 0) {
            try {
                observer.jobsEnqueued(queue, kind, count);
            } catch (RuntimeException e) {
                ignored(e);
            }
        }
    }

    /**
     * Reports what happened to a job; {@link JobEvent#LEASE_LOST} only the first time for a lease.
     *
     * @param event what happened
     * @param job the job
     */
    public void jobEvent(JobEvent event, Job job) {
        if (!enabled) {
            return;
        }
        UUID leaseId = job.leaseId();
        if (event == JobEvent.LEASE_LOST && leaseId != null && lostLeases.putIfAbsent(leaseId, Boolean.TRUE) != null) {
            return;
        }
        try {
            observer.jobEvent(event, job);
        } catch (RuntimeException e) {
            ignored(e);
        }
    }

    /**
     * Reports what a worker's loop did.
     *
     * @param event what happened
     * @param queue the worker's queue
     */
    public void workerEvent(WorkerEvent event, String queue) {
        if (enabled) {
            try {
                observer.workerEvent(event, queue);
            } catch (RuntimeException e) {
                ignored(e);
            }
        }
    }

    /**
     * Reports rescued jobs of one queue.
     *
     * @param queue the queue
     * @param toPending how many went back to pending
     * @param toFailed how many failed for good
     */
    public void jobsRescued(String queue, int toPending, int toFailed) {
        if (enabled) {
            try {
                observer.jobsRescued(queue, toPending, toFailed);
            } catch (RuntimeException e) {
                ignored(e);
            }
        }
    }

    /**
     * Reports a retry, and the lock failure behind it if that is what it was.
     *
     * @param failedAttempts attempts failed so far
     * @param failure why the last one failed
     */
    public void retried(int failedAttempts, LocksmithException failure) {
        if (!enabled) {
            return;
        }
        lockFailed(failure);
        try {
            observer.retried(failedAttempts, failure);
        } catch (RuntimeException e) {
            ignored(e);
        }
    }

    /**
     * Reports a deadlock or lock timeout once per exception; other failures are not reported.
     *
     * @param failure a failure
     */
    public void lockFailed(LocksmithException failure) {
        if (!enabled || !(failure instanceof DeadlockException || failure instanceof LockNotAvailableException)) {
            return;
        }
        if (!REPORTED_LOCK_FAILURES.add(failure)) {
            return;
        }
        try {
            observer.lockFailed(failure);
        } catch (RuntimeException e) {
            ignored(e);
        }
    }

    /**
     * The trace context to store with jobs enqueued now: the observer's, when it has the shape
     * the column's CHECK constraint accepts. Anything else would fail the enqueue itself, so it is
     * dropped (logged at DEBUG) and the jobs are stored without one.
     *
     * @return a well-formed {@code traceparent}, or null
     */
    public @Nullable String traceparent() {
        if (!enabled) {
            return null;
        }
        String traceparent;
        try {
            traceparent = observer.traceparent();
        } catch (RuntimeException e) {
            ignored(e);
            return null;
        }
        if (traceparent != null && !TRACEPARENT.matcher(traceparent).matches()) {
            LOG.debug(
                    "a LocksmithObserver returned a malformed traceparent, {}; jobs are enqueued without one",
                    traceparent);
            return null;
        }
        return traceparent;
    }

    private static void ignored(RuntimeException e) {
        LOG.debug("a LocksmithObserver threw; ignored", e);
    }
}

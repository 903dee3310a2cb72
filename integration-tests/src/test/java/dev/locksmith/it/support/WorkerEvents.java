package dev.locksmith.it.support;

import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.WorkerEvent;

/**
 * A {@link LocksmithObserver} for tests that follow a worker: the observer's job and worker
 * events, one method each. Give it to the environment the worker's queue is built in
 * ({@code Locksmith.builder(pool).observer(events)}).
 */
public abstract class WorkerEvents implements LocksmithObserver {

    /** Why a waiting thread woke. */
    public enum Wake {
        NOTIFICATION,
        IN_PROCESS,
        POLL,
        INTERNAL
    }

    /** The LISTEN connection is established. */
    public void listening() {}

    /** A claim came back short, and its thread is about to wait. */
    public void idle() {}

    /** A waiting thread woke. */
    public void woke(Wake reason) {}

    /** A claim statement returned the job. */
    public void claimed(Job job) {}

    /** A job was completed, and it committed. */
    public void completed(Job job) {}

    /** An attempt ended other than by completion (a failure, or the handler's control). */
    public void failed(Job job, FailResult.Outcome outcome) {}

    /** A job's lease was found lost. */
    public void leaseLost(Job job) {}

    /** A job was given back unfinished at shutdown. */
    public void released(Job job) {}

    @Override
    public final void workerEvent(WorkerEvent event, String queue) {
        switch (event) {
            case LISTENING -> listening();
            case IDLE -> idle();
            case WOKE_BY_NOTIFICATION -> woke(Wake.NOTIFICATION);
            case WOKE_IN_PROCESS -> woke(Wake.IN_PROCESS);
            case WOKE_BY_POLL -> woke(Wake.POLL);
            case WOKE_INTERNALLY -> woke(Wake.INTERNAL);
        }
    }

    @Override
    public final void jobEvent(JobEvent event, Job job) {
        switch (event) {
            case COMPLETED -> completed(job);
            case RETRY_SCHEDULED -> failed(job, FailResult.Outcome.RETRY_SCHEDULED);
            case FAILED -> failed(job, FailResult.Outcome.FAILED);
            case SNOOZED -> failed(job, FailResult.Outcome.SNOOZED);
            case CANCELLED -> failed(job, FailResult.Outcome.CANCELLED);
            case LEASE_LOST -> leaseLost(job);
            case RELEASED -> released(job);
            case CLAIMED -> claimed(job);
        }
    }
}

package dev.locksmith.observe;

import java.util.Locale;

/**
 * What happened to one job, as {@link LocksmithObserver#jobEvent(JobEvent, dev.locksmith.jobs.Job)}
 * reports it. Reported when the statement that did it returned, inside the caller's
 * transaction when there is one: a transaction that rolls back afterwards does not take the
 * event back.
 */
public enum JobEvent {
    /** A claim (leased or transactional) took the job. */
    CLAIMED,
    /**
     * The job was completed: by {@code JobQueue.complete}/{@code completeAll} for a leased job, by
     * the commit of {@code TransactionalWorker}'s transaction for a job it handled, by
     * {@code COMMIT PREPARED} of {@code TwoPhaseWorker} or of its resolver.
     */
    COMPLETED,
    /** An attempt failed and the job will run again after its backoff. */
    RETRY_SCHEDULED,
    /**
     * An attempt failed and it was the last, or the handler failed the job permanently
     * ({@code JobControl.failPermanently}): the job is {@code failed} for good.
     */
    FAILED,
    /**
     * A lease holder found its lease gone (heartbeat, complete, fail or release on a job that was
     * rescued or cancelled meanwhile). Reported once per lease, however many calls find it gone.
     */
    LEASE_LOST,
    /** A leased job was given back without counting the attempt (a worker shutting down). */
    RELEASED,
    /** The handler snoozed the job ({@code JobControl.snooze}): it runs again later, the attempt not counted. */
    SNOOZED,
    /** The handler cancelled the job ({@code JobControl.cancel}): it is {@code cancelled}. */
    CANCELLED;

    /**
     * The event as a metric tag or span attribute value.
     *
     * @return the name in lower case, such as {@code retry_scheduled}
     */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}

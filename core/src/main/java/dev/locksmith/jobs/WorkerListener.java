package dev.locksmith.jobs;

/** Observes a {@link JobWorker}, for metrics and tests. Callbacks run on worker threads and must be quick. */
public interface WorkerListener {

    /** Why an idle claimer woke up. */
    enum Wake {
        /** A {@code NOTIFY} for this queue arrived. */
        NOTIFICATION,
        /** The poll interval passed. */
        POLL,
        /** A handler slot became free, or the worker is stopping. */
        INTERNAL
    }

    /** The claimer found nothing to claim and is about to wait. */
    default void idle() {}

    /**
     * The claimer woke up.
     *
     * @param reason what woke it
     */
    default void woke(Wake reason) {}

    /** The LISTEN connection is established (notifications can now wake the worker). */
    default void listening() {}

    /**
     * A job was completed: its completion committed with the handler's writes.
     *
     * @param job the job as claimed
     */
    default void completed(Job job) {}

    /**
     * A job's handler threw (a failure, or a {@link JobControl}); its writes were rolled back and
     * the failure or the control recorded.
     *
     * @param job the job as claimed
     * @param error what the handler threw
     * @param result whether the job was rescheduled, failed for good, snoozed, cancelled, or its
     *     lease was lost
     */
    default void failed(Job job, Throwable error, FailResult result) {}

    /**
     * A job's lease was lost before its handler finished (it expired and was rescued, or the job
     * was cancelled); its transaction was rolled back and the job may run elsewhere.
     *
     * @param job the job as claimed
     */
    default void leaseLost(Job job) {}

    /**
     * A job was given back unfinished at shutdown, claimable again at once.
     *
     * @param job the job as claimed
     */
    default void released(Job job) {}
}

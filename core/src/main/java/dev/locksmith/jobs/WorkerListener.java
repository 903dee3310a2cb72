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
    default void idle() {
    }

    /** The claimer woke up. */
    default void woke(Wake reason) {
    }

    /** The LISTEN connection is established (notifications can now wake the worker). */
    default void listening() {
    }

    /** A job was completed. */
    default void completed(Job job) {
    }

    /** A job's handler failed; {@code result} says what happened to it. */
    default void failed(Job job, Throwable error, FailResult result) {
    }

    /** A job's lease was lost before its handler finished; its transaction was rolled back. */
    default void leaseLost(Job job) {
    }

    /** A job was given back unfinished at shutdown. */
    default void released(Job job) {
    }
}

package dev.locksmith.observe;

import java.util.Locale;

/**
 * What a worker's loop did, as {@link LocksmithObserver#workerEvent(WorkerEvent, String)}
 * reports it: whether LISTEN works, and what wakes idle workers. Behind PgBouncer in transaction
 * mode, or with LISTEN off, workers are woken by polling only; a count of wake-ups by reason shows
 * which it is.
 */
public enum WorkerEvent {
    /** The worker's LISTEN connection is established: notifications can wake it from now on. */
    LISTENING,
    /**
     * A claim found fewer jobs than it asked for, and its thread is about to wait: a claimer's,
     * or a {@code JobWorker} handler thread's that looked for its next job and found none.
     */
    IDLE,
    /**
     * A waiting thread was woken by a {@code NOTIFY} for its queue, or an idle handler thread of a
     * {@code JobWorker} was set to claim the jobs it announced.
     */
    WOKE_BY_NOTIFICATION,
    /**
     * A waiting thread was woken in-process by an enqueue of its queue committed in this JVM (the
     * wake-up after commit), before any {@code NOTIFY} could reach it, or an idle handler thread of
     * a {@code JobWorker} was set to claim that enqueue's jobs: says nothing about LISTEN.
     */
    WOKE_IN_PROCESS,
    /** A waiting thread woke because the poll interval passed. */
    WOKE_BY_POLL,
    /** A waiting thread was woken by the worker itself: room for more jobs, or shutdown. */
    WOKE_INTERNALLY;

    /**
     * The event as a metric tag or span attribute value.
     *
     * @return the name in lower case, such as {@code woke_by_poll}
     */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}

package dev.locksmith.jobs.runtime;

import dev.locksmith.internal.Observing;
import dev.locksmith.observe.WorkerEvent;
import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * How a worker's idle threads wait and are woken: by a notification for the queue, by the worker
 * itself (room for more jobs, a key's next job claimable, shutdown), or by the poll interval. A
 * generation counter, not a flag: a thread reads the generation before it looks for work, and a
 * wake-up after that ends its wait at once, however many threads wait. <b>Internal: not API.</b>
 */
final class Wakeup {

    /** Why a thread was woken. */
    enum Reason {
        NOTIFICATION,
        /**
         * An enqueue committed in this JVM: it wakes one waiting thread, not all, as a commit's
         * jobs need one claim and waking every idle loop (a {@code TransactionalWorker} has one
         * per thread) at each commit would make them all claim; the others wake at the
         * {@code NOTIFY} or their poll.
         */
        IN_PROCESS,
        INTERNAL
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition condition = lock.newCondition();
    private final Observing observing;
    private final String queue;
    /** Wake-ups so far. Guarded by lock. */
    private long generation;
    /** The generation of the latest notification. Guarded by lock. */
    private long notifiedGeneration = -1;
    /** The generation of the latest in-process wake-up. Guarded by lock. */
    private long inProcessGeneration = -1;

    Wakeup(Observing observing, String queue) {
        this.observing = observing;
        this.queue = queue;
    }

    /** {@return the wake-ups so far: read it before looking for work} */
    long generation() {
        lock.lock();
        try {
            return generation;
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every waiting thread, or one for {@link Reason#IN_PROCESS}. */
    void wake(Reason reason) {
        lock.lock();
        try {
            generation++;
            if (reason == Reason.NOTIFICATION) {
                notifiedGeneration = generation;
            }
            if (reason == Reason.IN_PROCESS) {
                inProcessGeneration = generation;
                condition.signal();
            } else {
                condition.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until a wake-up after generation {@code seen} (at once if one came already), the
     * timeout, or until {@code running} is false.
     *
     * @return why it woke (a notification first, then an in-process wake-up);
     *     {@link WorkerEvent#WOKE_BY_POLL} for the timeout
     */
    WorkerEvent await(long seen, Duration timeout, BooleanSupplier running) {
        lock.lock();
        try {
            long nanos = timeout.toNanos();
            while (generation == seen && running.getAsBoolean() && nanos > 0) {
                nanos = condition.awaitNanos(nanos);
            }
            if (notifiedGeneration > seen) {
                return WorkerEvent.WOKE_BY_NOTIFICATION;
            }
            if (inProcessGeneration > seen) {
                return WorkerEvent.WOKE_IN_PROCESS;
            }
            return generation != seen ? WorkerEvent.WOKE_INTERNALLY : WorkerEvent.WOKE_BY_POLL;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return WorkerEvent.WOKE_INTERNALLY;
        } finally {
            lock.unlock();
        }
    }

    /** Tells the observer why an idle thread went back to work. */
    void report(WorkerEvent woke) {
        observing.workerEvent(woke, queue);
    }
}

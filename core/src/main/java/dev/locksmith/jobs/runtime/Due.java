package dev.locksmith.jobs.runtime;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A periodic check shared by a worker's threads: each asks {@link #take()} between jobs, and the
 * one that finds it due and takes it (one compare-and-set) does the check; the others go on at
 * once. <b>Internal: not API.</b>
 */
final class Due {

    private final Duration interval;
    private final AtomicLong next;

    /**
     * @param interval how often the check is due
     * @param now whether the first is due at once, else after one interval
     */
    Due(Duration interval, boolean now) {
        this.interval = interval;
        this.next = new AtomicLong(System.nanoTime() + (now ? 0 : interval.toNanos()));
    }

    /** {@return whether the check is due and this thread took it: the next is then one interval away} */
    boolean take() {
        long now = System.nanoTime();
        long due = next.get();
        return now - due >= 0 && next.compareAndSet(due, now + interval.toNanos());
    }

    /** {@return how often the check is due} */
    Duration interval() {
        return interval;
    }
}

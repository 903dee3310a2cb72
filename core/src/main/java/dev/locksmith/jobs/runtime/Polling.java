package dev.locksmith.jobs.runtime;

import java.time.Duration;

/**
 * When an idle worker without a LISTEN connection looks for jobs again: an adaptive poll shared
 * by the worker's loop threads. While claims keep finding jobs (one did within the last
 * {@link #BUSY second}) the worker polls at the shortest interval; after that each poll that
 * finds none doubles the interval, up to the poll interval. However many threads are idle, one of
 * them polls when the next poll is due, so a worker costs at most one empty claim per shortest
 * interval while jobs arrive, and one per poll interval once they have stopped a while.
 * <b>Internal: not API.</b>
 */
final class Polling {

    /** How long after a claim found jobs the worker goes on polling at the shortest interval. */
    static final Duration BUSY = Duration.ofSeconds(1);

    private final long shortest;
    private final long longest;
    /** The wait after the next empty claim. Guarded by this. */
    private long interval;
    /** When the next poll is due, in {@link System#nanoTime()}. Guarded by this. */
    private long due;
    /** When a claim last found jobs. Guarded by this. */
    private long lastFound;

    /**
     * @param shortest the interval after a claim that found jobs
     * @param longest the poll interval, what the interval grows to while claims find nothing
     */
    Polling(Duration shortest, Duration longest) {
        this.shortest = Math.min(shortest.toNanos(), longest.toNanos());
        this.longest = longest.toNanos();
        // A worker starts as after a claim that found jobs: it looks again soon, then backs off.
        this.interval = this.shortest;
        this.lastFound = System.nanoTime();
        this.due = lastFound + this.shortest;
    }

    /** {@return how long an idle thread waits before it asks again whether the poll is due} */
    synchronized Duration untilDue() {
        return Duration.ofNanos(Math.max(0, Math.min(due - System.nanoTime(), longest)));
    }

    /**
     * Takes the due poll for the calling thread: true when the poll was due (the caller claims),
     * false when another thread took it (the caller waits again).
     */
    synchronized boolean take() {
        long now = System.nanoTime();
        if (now - due < 0) {
            return false;
        }
        due = now + interval;
        return true;
    }

    /**
     * A loop thread's turn ended: a claim that found jobs brings the next poll to the shortest
     * interval; a poll (a turn started because the poll was due) that found none, more than
     * {@link #BUSY} after one that did, doubles it.
     * Empty claims of turns started otherwise (a wake-up from the worker, when a handler ends)
     * leave the schedule alone: they say nothing of how often jobs arrive.
     *
     * @param turn what the turn found
     * @param polled whether the turn started because this thread took the due poll
     */
    synchronized void after(Mode.Turn turn, boolean polled) {
        switch (turn) {
            case MORE, FOUND -> {
                interval = shortest;
                lastFound = System.nanoTime();
                due = lastFound + interval;
            }
            case EMPTY -> {
                if (polled) {
                    long now = System.nanoTime();
                    if (now - lastFound > BUSY.toNanos()) {
                        interval = Math.min(longest, interval * 2);
                    }
                    due = now + interval;
                }
            }
            case FULL -> {
                // no claim was made
            }
        }
    }
}

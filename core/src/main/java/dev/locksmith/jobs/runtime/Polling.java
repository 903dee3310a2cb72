package dev.locksmith.jobs.runtime;

import java.time.Duration;

/**
 * When an idle worker without a LISTEN connection looks for jobs again: an adaptive poll shared
 * by the worker's loop threads. A claim that found jobs brings the next poll to the shortest
 * interval; each claim that found none doubles the interval, up to the poll interval. However many
 * threads are idle, one of them polls when the next poll is due, so an idle worker costs one
 * claim per interval; while jobs keep arriving, at most one empty claim per shortest interval.
 * <b>Internal: not API.</b>
 */
final class Polling {

    private final long shortest;
    private final long longest;
    /** The wait after the next empty claim. Guarded by this. */
    private long interval;
    /** When the next poll is due, in {@link System#nanoTime()}. Guarded by this. */
    private long due;

    /**
     * @param shortest the interval after a claim that found jobs
     * @param longest the poll interval, what the interval grows to while claims find nothing
     */
    Polling(Duration shortest, Duration longest) {
        this.shortest = Math.min(shortest.toNanos(), longest.toNanos());
        this.longest = longest.toNanos();
        // A worker starts as after a claim that found jobs: it looks again soon, then backs off.
        this.interval = this.shortest;
        this.due = System.nanoTime() + this.shortest;
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

    /** A loop thread's turn ended: a claim that found jobs, or none, sets the next poll. */
    synchronized void after(Mode.Turn turn) {
        switch (turn) {
            case MORE, FOUND -> interval = shortest;
            case EMPTY -> interval = Math.min(longest, interval * 2);
            case FULL -> {
                return; // no claim was made
            }
        }
        due = System.nanoTime() + interval;
    }
}

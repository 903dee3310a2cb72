package dev.locksmith.jobs.runtime;

import java.time.Duration;
import java.util.List;

/**
 * What differs between the leased, transactional and two-phase workers: how a loop thread claims,
 * runs and settles, what runs periodically, and how work in hand ends at shutdown. Everything else
 * (threads, the loop, wake-up, LISTEN, vacuum, start and close) is the {@link WorkerRuntime}'s.
 * <b>Internal: not API.</b>
 */
interface Mode {

    /** {@return what the worker is called in messages, e.g. {@code "worker of 2 claimers"}} */
    String description();

    /** {@return connections the worker needs at the same time, LISTEN included} */
    int connectionsNeeded();

    /** {@return how many threads run the loop: claimers, or handler threads that claim} */
    int loops();

    /** {@return whether the loop threads run the handlers (and so are virtual with virtual threads)} */
    default boolean loopsRunHandlers() {
        return true;
    }

    /** {@return the name of loop thread {@code index} (0-based), after {@code locksmith-<queue>-}} */
    String loopName(int index);

    /** Checks before the worker counts as started; what it throws fails {@code start()}. */
    default void check() {}

    /** Just before the loop threads start (and after {@link #check}). */
    default void starting() {}

    /** What a loop thread's turn found, which says what the thread does next. */
    enum Turn {
        /** Claimed as much as it asked for, or the claim may have made more claimable: go on at once. */
        MORE,
        /** Claimed jobs, fewer than it asked for: wait, and poll again soon. */
        FOUND,
        /** Claimed none (or the claim failed): wait, and poll later each time. */
        EMPTY,
        /** Had no room to claim: wait for room (a wake-up from the mode). */
        FULL
    }

    /**
     * One turn of a loop thread: claim and run what it can.
     *
     * @param loop which loop thread, 0 to {@link #loops()} - 1
     * @return what the turn found
     */
    Turn turn(int loop);

    /**
     * A notification, or an enqueue committed in this JVM, announced jobs: a mode that can claim
     * them on an idle handler thread, which then runs the first itself, starts that claim and
     * returns true; the loop threads are not woken then (a claim on a loop thread would hand its
     * job to a handler thread: one thread more to wake before the job starts).
     *
     * @return false (the default) to wake the loop threads instead
     */
    default boolean claimOnIdleHandler() {
        return false;
    }

    /** {@return the periodic tasks, run on the worker's maintenance thread} */
    default List<Periodic> periodic() {
        return List.of();
    }

    /** Whether a loop thread still inside a handler at shutdown is interrupted after the grace. */
    default boolean interruptsLoops() {
        return true;
    }

    /**
     * After the loop threads stopped (or were given up on): finish or give back the work in hand.
     *
     * @param grace how long handlers may take, and again after an interrupt
     * @param afterIdle to run once no handler of this mode runs any more (at once, or later when
     *     handlers that ignored their interrupt end)
     * @return the names of handler threads still running
     */
    default List<String> stop(Duration grace, Runnable afterIdle) {
        afterIdle.run();
        return List.of();
    }

    /** {@return handler threads running now, beside the loop threads} */
    default int busyHandlers() {
        return 0;
    }

    /**
     * A task the worker runs periodically.
     *
     * @param initialDelay before the first run
     * @param interval between the end of one run and the start of the next
     * @param task the work; it logs its own failures
     * @param untilIdle whether it goes on after {@code close()} while handlers the worker could not
     *     stop still run (a heartbeat), rather than stopping with the worker
     */
    record Periodic(Duration initialDelay, Duration interval, Runnable task, boolean untilIdle) {}
}

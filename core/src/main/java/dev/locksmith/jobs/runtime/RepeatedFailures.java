package dev.locksmith.jobs.runtime;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;

/**
 * How a worker's periodic upkeep (vacuum, history partitions, generations) logs its failures: the
 * first of a run of failures at WARN, with its cause, the rest at DEBUG, and a success ends the
 * run. A role that lacks a privilege, or a pool whose connections do not auto-commit, fails on
 * every pass, and a WARN per pass would flood the log.
 */
final class RepeatedFailures {

    private final Logger log;
    private final String what;
    private final AtomicBoolean failing = new AtomicBoolean();

    /**
     * @param log where to log
     * @param what what fails, for the DEBUG line of a repeated failure ("vacuum of ... of queue q")
     */
    RepeatedFailures(Logger log, String what) {
        this.log = log;
        this.what = what;
    }

    /** A pass succeeded: the next failure is the first of a new run. */
    void succeeded() {
        failing.set(false);
    }

    /**
     * A pass failed: at WARN with {@code pattern} and {@code arguments} (the cause follows them) if
     * it is the first of a run, else at DEBUG.
     */
    void failed(RuntimeException cause, String pattern, Object... arguments) {
        if (failing.compareAndSet(false, true)) {
            Object[] withCause = Arrays.copyOf(arguments, arguments.length + 1);
            withCause[arguments.length] = cause;
            log.warn(pattern, withCause);
        } else {
            log.debug("{} failed again", what, cause);
        }
    }
}

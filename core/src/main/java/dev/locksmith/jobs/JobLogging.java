package dev.locksmith.jobs;

import org.slf4j.Logger;
import org.slf4j.MDC;
import org.slf4j.event.Level;

/** What both workers log about a job, and the MDC around its handler. */
final class JobLogging {

    /** MDC key: the job's id. */
    static final String JOB_ID = "locksmith.job.id";
    /** MDC key: the job's queue. */
    static final String QUEUE = "locksmith.job.queue";
    /** MDC key: the job's kind. */
    static final String KIND = "locksmith.job.kind";
    /** MDC key: the attempt that runs now (1 for the first). */
    static final String ATTEMPT = "locksmith.job.attempt";

    /** How much of a failure's stack trace {@code last_error} keeps. */
    static final int MAX_ERROR_LENGTH = 8_000;
    /** Frames kept of each throwable of the cause chain. */
    static final int FRAMES_PER_THROWABLE = 15;

    private static final int MAX_CAUSES = 10;

    /** The MDC keys around a handler, in the order {@link #mdc} sets them. */
    private static final String[] KEYS = {JOB_ID, QUEUE, KIND, ATTEMPT};

    private JobLogging() {}

    /**
     * Puts the job's keys into the MDC until {@link Scope#close()}, which restores whatever the
     * keys held before (a handler may run inside a thread that has MDC values of its own).
     */
    static Scope mdc(Job job, int attempt) {
        // Runs around every handler: plain arrays, no maps built per job.
        String[] previous = new String[KEYS.length];
        String[] values = {Long.toString(job.id()), job.queue(), job.kind(), Integer.toString(attempt)};
        for (int i = 0; i < KEYS.length; i++) {
            previous[i] = MDC.get(KEYS[i]);
            MDC.put(KEYS[i], values[i]);
        }
        return () -> {
            for (int i = 0; i < KEYS.length; i++) {
                if (previous[i] == null) {
                    MDC.remove(KEYS[i]);
                } else {
                    MDC.put(KEYS[i], previous[i]);
                }
            }
        };
    }

    /**
     * Logs a handler failure once, with its stack trace: at ERROR when the job failed for good,
     * at {@code level} when it will be retried, at WARN when the lease was lost meanwhile. A
     * {@link JobControl} is a decision rather than an error: a snooze is logged at DEBUG and a
     * cancellation at INFO, without a stack trace; a permanent failure at ERROR with the cause the
     * handler gave, if any.
     */
    static void handlerFailed(Logger log, Level level, Job job, int attempt, Throwable error, FailResult result) {
        JobControl control = JobControl.find(error);
        Throwable cause = control == null ? error : control.getCause();
        switch (result.outcome()) {
            case FAILED -> {
                if (control != null && control.action() == JobControl.Action.FAIL) {
                    log.atError()
                            .setCause(cause)
                            .log(
                                    "job {} ({}) of queue {} failed permanently by its handler at attempt {}: {}",
                                    job.id(),
                                    job.kind(),
                                    job.queue(),
                                    attempt,
                                    firstLine(control.reason()));
                    return;
                }
                log.atError()
                        .setCause(cause)
                        .log(
                                "job {} ({}) of queue {} failed for good after {} attempts",
                                job.id(),
                                job.kind(),
                                job.queue(),
                                attempt);
            }
            case SNOOZED ->
                log.atDebug().log(
                        "job {} ({}) of queue {} snoozed by its handler until {}",
                        job.id(),
                        job.kind(),
                        job.queue(),
                        result.retryAt().orElse(null));
            case CANCELLED ->
                log.atInfo().log(
                        "job {} ({}) of queue {} cancelled by its handler: {}",
                        job.id(),
                        job.kind(),
                        job.queue(),
                        control == null ? "" : firstLine(control.reason()));
            case RETRY_SCHEDULED ->
                log.atLevel(level)
                        .setCause(cause)
                        .log(
                                "job {} ({}) of queue {} failed, attempt {} of {}; retrying at {}",
                                job.id(),
                                job.kind(),
                                job.queue(),
                                attempt,
                                job.maxAttempts(),
                                result.retryAt().orElse(null));
            case LEASE_LOST ->
                log.atWarn()
                        .setCause(error)
                        .log(
                                "job {} ({}) of queue {} failed, attempt {}, after its lease was lost; it runs again under its new "
                                        + "lease",
                                job.id(),
                                job.kind(),
                                job.queue(),
                                attempt);
        }
    }

    private static String firstLine(String text) {
        int end = text.indexOf('\n');
        return end < 0 ? text : text.substring(0, end);
    }

    /**
     * What {@code last_error} keeps of a failure: its stack trace (the cause of a jOOQ
     * {@code DataAccessException}, which only wraps it), with at most
     * {@value #FRAMES_PER_THROWABLE} frames of each throwable in the cause chain so that the
     * root cause survives a deep stack, cut to {@link #MAX_ERROR_LENGTH} in all.
     */
    static String describe(Throwable error) {
        Throwable first = error instanceof org.jooq.exception.DataAccessException && error.getCause() != null
                ? error.getCause()
                : error;
        StringBuilder text = new StringBuilder();
        int depth = 0;
        for (Throwable t = first;
                t != null && depth < MAX_CAUSES;
                t = t.getCause() == t ? null : t.getCause(), depth++) {
            text.append(depth == 0 ? "" : "\nCaused by: ").append(t);
            StackTraceElement[] frames = t.getStackTrace();
            for (int i = 0; i < Math.min(frames.length, FRAMES_PER_THROWABLE); i++) {
                text.append("\n\tat ").append(frames[i]);
            }
            if (frames.length > FRAMES_PER_THROWABLE) {
                text.append("\n\t... ")
                        .append(frames.length - FRAMES_PER_THROWABLE)
                        .append(" more");
            }
        }
        if (text.length() <= MAX_ERROR_LENGTH) {
            return text.toString();
        }
        String marker = "\n\t... (cut at " + MAX_ERROR_LENGTH + " characters)";
        return text.substring(0, MAX_ERROR_LENGTH - marker.length()) + marker;
    }

    /** Restores the MDC; closing never throws. */
    @FunctionalInterface
    interface Scope extends AutoCloseable {
        @Override
        void close();
    }
}

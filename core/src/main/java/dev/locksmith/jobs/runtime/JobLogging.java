package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import java.util.List;
import org.jspecify.annotations.Nullable;
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

    /** The MDC keys around a handler, in the order {@link #mdc} sets them. */
    private static final String[] KEYS = {JOB_ID, QUEUE, KIND, ATTEMPT};

    private JobLogging() {}

    /**
     * Puts the job's keys into the MDC until {@link Scope#close()}, which restores whatever the
     * keys held before (a handler may run inside a thread that has MDC values of its own).
     */
    static Scope mdc(Job job, int attempt) {
        // Runs around every handler: plain arrays, no maps built per job.
        return put(new String[] {Long.toString(job.id()), job.queue(), job.kind(), Integer.toString(attempt)});
    }

    /**
     * The MDC around a batch handler: one job's keys when the batch has one job, else the queue
     * alone (and the kind, when every job of the batch has the same).
     */
    static Scope mdc(List<Job> batch) {
        Job first = batch.get(0);
        if (batch.size() == 1) {
            return mdc(first, first.attempts());
        }
        boolean oneKind = batch.stream().allMatch(job -> job.kind().equals(first.kind()));
        return put(new String[] {null, first.queue(), oneKind ? first.kind() : null, null});
    }

    private static Scope put(@Nullable String[] values) {
        String[] previous = new String[KEYS.length];
        for (int i = 0; i < KEYS.length; i++) {
            previous[i] = MDC.get(KEYS[i]);
            if (values[i] == null) {
                MDC.remove(KEYS[i]);
            } else {
                MDC.put(KEYS[i], values[i]);
            }
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
        JobControl control = Controls.find(error);
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

    /** Restores the MDC; closing never throws. */
    @FunctionalInterface
    interface Scope extends AutoCloseable {
        @Override
        void close();
    }
}

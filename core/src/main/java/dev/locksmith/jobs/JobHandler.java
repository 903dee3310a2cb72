package dev.locksmith.jobs;

import org.jooq.DSLContext;

/**
 * The work a {@link JobWorker} does for one job. It runs inside a transaction that also
 * completes the job: database writes made through {@code tx} commit together with the
 * completion, and are rolled back if the handler throws or the worker has lost the lease
 * meanwhile. Side effects outside the database may happen more than once (leased mode is at
 * least once) and should be idempotent.
 */
@FunctionalInterface
public interface JobHandler {

    /**
     * Does the work. Throwing marks the attempt failed: the job is retried with backoff, or
     * fails for good after {@code max_attempts}; the exception's stack trace goes to
     * {@code last_error}. Throwing a {@link JobControl} instead snoozes the job, retries it after a
     * delay of the handler's choosing, fails it permanently or cancels it; the handler's writes are
     * rolled back either way.
     *
     * <p>Runs on one of the worker's handler threads, while the worker keeps the lease alive
     * with heartbeats. Row locks the handler takes through {@code tx} are held until the
     * completion commits; keep them few and short, as they are held for the whole handler.
     *
     * @param job the leased job
     * @param tx the open transaction the completion will commit in
     * @throws Exception any failure of the work: the transaction rolls back and the attempt is
     *     recorded as failed
     */
    void handle(Job job, DSLContext tx) throws Exception;
}

package dev.locksmith.jobs;

import java.util.List;
import org.jooq.DSLContext;

/**
 * The work a {@link TransactionalWorker} does for a batch of jobs, inside the transaction that
 * claimed (deleted) them: the work and the removal commit together, and if the handler throws,
 * the transaction rolls back and every job of the batch is back in the queue.
 */
@FunctionalInterface
public interface BatchJobHandler {

    /**
     * Does the work for {@code jobs} (one to the worker's batch size, in claim order). The
     * claimed rows stay locked (and invisible to other workers' claims, which skip them) until
     * the transaction ends.
     *
     * @param jobs the claimed jobs: one to the worker's batch size, in claim order
     * @param tx the open transaction that claimed them
     * @throws Exception any failure, or a {@link JobControl} for the job at hand when the handler
     *     was given one job (see {@link TransactionalWorker} for a control thrown for a batch): the
     *     transaction rolls back, every job of the batch is
     *     claimable again at once with its attempts unchanged, and the worker hands its next jobs
     *     to the handler one at a time, so that the failing job is found, counted and retried with
     *     backoff (see {@link TransactionalWorker})
     */
    void handle(List<Job> jobs, DSLContext tx) throws Exception;
}

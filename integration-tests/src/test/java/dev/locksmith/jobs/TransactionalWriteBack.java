package dev.locksmith.jobs;

import org.jooq.DSLContext;

/**
 * Reaches the write-back of a failed transactional attempt (what {@link TransactionalWorker} does
 * with a handler's failure, in the claiming transaction) from the tests of other packages. Not
 * API: it lives in the test sources, in the queue's package.
 */
public final class TransactionalWriteBack {

    private TransactionalWriteBack() {}

    /**
     * Records the failure of {@code job}, which a transactional claim in {@code tx} returned.
     *
     * @param queue the queue that claimed it
     * @param tx the claiming transaction
     * @param job the job in hand
     * @param error the failure
     * @return the outcome
     */
    public static FailResult fail(JobQueue queue, DSLContext tx, Job job, String error) {
        return queue.engine().settlement.requeueFailed(tx, job, error);
    }
}

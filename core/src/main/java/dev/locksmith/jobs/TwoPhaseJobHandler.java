package dev.locksmith.jobs;

import org.jooq.DSLContext;

/**
 * The work a {@link TwoPhaseWorker} does for one job: database writes in the transaction that
 * claimed it, then a side effect outside the database once that transaction is prepared.
 *
 * <pre>{@code
 * new TwoPhaseJobHandler() {
 *     public void handleInTransaction(Job job, DSLContext tx) {
 *         payments.markSent(tx, job);                       // commits with COMMIT PREPARED
 *     }
 *     public void performSideEffect(PreparedJob job) throws IOException {
 *         provider.charge(job.job().payload(), job.gid());  // the gid is the idempotency key
 *     }
 * }
 * }</pre>
 */
@FunctionalInterface
public interface TwoPhaseJobHandler {

    /**
     * Database work for {@code job}, in the open transaction that claimed (deleted) it; default:
     * none. Its writes commit with {@code COMMIT PREPARED}, after the side effect, and are rolled
     * back with the claim when anything fails.
     *
     * <p>The transaction is prepared when this returns, so it must not do what PostgreSQL refuses
     * to prepare: {@code NOTIFY} (follow-up jobs enqueued here with the default
     * {@link WakeUp#AFTER_COMMIT} wake their workers after {@code COMMIT PREPARED}, not inside the
     * transaction; {@link WakeUp#IN_TRANSACTION} would make it fail), {@code LISTEN}, temporary tables,
     * {@code WITH HOLD} cursors. Row locks it takes are held while the transaction is prepared:
     * through the side effect, and, if the worker dies there, until a resolver settles the
     * transaction. Take none on rows others wait for.
     *
     * @param job the claimed job
     * @param tx the open transaction that took the job off the queue; do not commit, roll back or
     *     prepare it
     * @throws Exception any failure: the transaction rolls back, the side effect does not run, and
     *     the failure is recorded as for {@link #performSideEffect} failures; or a
     *     {@link JobControl} (snooze, retry after a delay, fail for good, cancel), which the worker
     *     carries out after the rollback, as the other workers do
     */
    default void handleInTransaction(Job job, DSLContext tx) throws Exception {}

    /**
     * The side effect, after the claiming transaction was prepared, with no transaction open and
     * no connection held. Returning means it happened: the worker then runs
     * {@code COMMIT PREPARED}. Throwing means it did not: {@code ROLLBACK PREPARED}, and the job
     * is back in the queue, the failure recorded (backoff, or failed after the last attempt). Use {@link PreparedJob#gid()} as the
     * idempotency key: a side effect that threw after all reaching the external system (a
     * timeout) is then recognised there when the job runs again.
     *
     * @param job the job and its gid
     * @throws Exception the side effect did not happen (or is safe to repeat under the same key);
     *     a {@link JobControl} is carried out after {@code ROLLBACK PREPARED}
     */
    void performSideEffect(PreparedJob job) throws Exception;
}

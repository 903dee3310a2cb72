package dev.locksmith.jobs;

/**
 * Asked by the resolver of a {@link TwoPhaseWorker} about a prepared job that nobody settled: the
 * worker died, or lost its connection, between {@code PREPARE TRANSACTION} and
 * {@code COMMIT PREPARED}. Look the side effect up in the external system by
 * {@link PreparedJob#gid()}, the idempotency key the worker used.
 *
 * <pre>{@code
 * SideEffectCheck check = job -> provider.findCharge(job.gid()).isPresent()
 *         ? SideEffectStatus.HAPPENED
 *         : SideEffectStatus.NOT_HAPPENED;
 * }</pre>
 */
@FunctionalInterface
public interface SideEffectCheck {

    /**
     * Whether the side effect of {@code job} happened. Called on the resolver's thread (or the
     * caller of {@link TwoPhaseWorker#resolveNow()}), with no transaction open, for jobs prepared
     * longer ago than the worker's {@code resolveOlderThan}. Several resolvers may ask about the
     * same job at once; the first to finish the transaction wins and the others skip it.
     *
     * <p>{@link SideEffectStatus#NOT_HAPPENED} must mean that it has not happened and cannot
     * happen later under this key except by the job running again: a side effect still in flight
     * (a worker slower than {@code resolveOlderThan}) that lands after the answer is repeated by
     * the next attempt, and only the external system's de-duplication by the key keeps it once.
     *
     * @param job the job as its claim left it ({@link Job#attempts()} counts this attempt), and its gid
     * @return what happened; {@link SideEffectStatus#UNKNOWN} to be asked again next round
     * @throws Exception when the check itself failed: logged at WARN, treated as
     *     {@link SideEffectStatus#UNKNOWN}
     */
    SideEffectStatus check(PreparedJob job) throws Exception;
}

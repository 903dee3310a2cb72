package dev.locksmith.jobs;

/**
 * What one round of a {@link TwoPhaseWorker}'s resolver did with the prepared transactions of
 * its queue that were older than its threshold.
 *
 * @param committed committed with {@code COMMIT PREPARED}: the side effect had happened, the job is done
 * @param rolledBack rolled back with {@code ROLLBACK PREPARED}: the side effect had not happened,
 *     the job is back in the queue
 * @param undecided left prepared: the check answered {@link SideEffectStatus#UNKNOWN} or failed,
 *     or finishing the transaction failed; asked about again next round
 */
public record ResolveResult(int committed, int rolledBack, int undecided) {

    /**
     * Checks the counts.
     *
     * @param committed zero or more
     * @param rolledBack zero or more
     * @param undecided zero or more
     * @throws IllegalArgumentException for a negative count
     */
    public ResolveResult {
        if (committed < 0 || rolledBack < 0 || undecided < 0) {
            throw new IllegalArgumentException(
                    "counts must not be negative, were " + committed + ", " + rolledBack + ", " + undecided);
        }
    }
}

package dev.locksmith.jobs;

/** What a {@link SideEffectCheck} found out about the side effect of a prepared job. */
public enum SideEffectStatus {
    /** It happened: the resolver commits the prepared transaction, and the job is done. */
    HAPPENED,
    /**
     * It did not happen, and will not under this key unless the job runs again: the resolver rolls
     * the prepared transaction back, and the job is back in the queue with the attempt counted.
     */
    NOT_HAPPENED,
    /** Cannot tell now: the transaction stays prepared (the job locked), and is asked about again next round. */
    UNKNOWN
}

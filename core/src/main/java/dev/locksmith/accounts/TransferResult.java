package dev.locksmith.accounts;

/**
 * What a transfer did. Insufficient funds is an expected outcome, so it is a value, not an
 * exception; nothing was written in that case.
 *
 * @param status whether money moved
 * @param attempts attempts it took: transactions for {@link TransferStrategy#SERIALIZABLE} and
 *     retried deadlocks, compare-and-swap rounds for {@link TransferStrategy#OPTIMISTIC}; 1
 *     when the first attempt settled it
 */
public record TransferResult(Status status, int attempts) {

    /** Outcome of a transfer. */
    public enum Status {
        /** The amount moved. */
        TRANSFERRED,
        /** The source balance was lower than the amount; nothing changed. */
        INSUFFICIENT_FUNDS,
        /**
         * A transfer with the same id had already moved the amount (an earlier call, perhaps one
         * whose outcome the caller never heard); nothing changed now.
         */
        ALREADY_TRANSFERRED
    }

    /** True when the amount moved, by this call or by an earlier one with the same transfer id. */
    public boolean transferred() {
        return status == Status.TRANSFERRED || status == Status.ALREADY_TRANSFERRED;
    }
}

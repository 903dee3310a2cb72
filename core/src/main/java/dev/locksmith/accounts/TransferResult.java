package dev.locksmith.accounts;

import java.util.Objects;

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

    /**
     * A status always, and at least one attempt.
     *
     * @param status the outcome; not null
     * @param attempts transactions it took, at least 1
     * @throws IllegalArgumentException when attempts is below 1
     */
    public TransferResult {
        Objects.requireNonNull(status, "status");
        if (attempts < 1) {
            throw new IllegalArgumentException("attempts must be at least 1, was " + attempts);
        }
    }

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

    /**
     * Whether the money is where the caller wanted it.
     *
     * @return true when the amount moved, by this call or by an earlier one with the same transfer
     *     id; false for insufficient funds
     */
    public boolean transferred() {
        return status == Status.TRANSFERRED || status == Status.ALREADY_TRANSFERRED;
    }
}

package dev.locksmith.accounts;

import dev.locksmith.exception.LocksmithException;

/**
 * An optimistic update lost the compare-and-swap race on every attempt its retry policy
 * allowed. Nothing was written by the failed attempts.
 */
public final class OptimisticConflictException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** The account whose version kept changing. */
    private final long accountId;
    /** How many attempts were made. */
    private final int attempts;

    OptimisticConflictException(long accountId, int attempts) {
        super("account " + accountId + " changed under every one of " + attempts + " optimistic attempts");
        this.accountId = accountId;
        this.attempts = attempts;
    }

    /** {@return the account whose version kept changing} */
    public long accountId() {
        return accountId;
    }

    /** {@return how many attempts were made, all lost} */
    public int attempts() {
        return attempts;
    }
}

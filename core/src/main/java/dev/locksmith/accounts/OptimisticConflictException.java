package dev.locksmith.accounts;

import dev.locksmith.LocksmithException;

/**
 * An optimistic update lost the compare-and-swap race on every attempt its retry policy
 * allowed. Nothing was written by the failed attempts.
 */
public final class OptimisticConflictException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    private final long accountId;
    private final int attempts;

    OptimisticConflictException(long accountId, int attempts) {
        super("account " + accountId + " changed under every one of " + attempts + " optimistic attempts");
        this.accountId = accountId;
        this.attempts = attempts;
    }

    /** The account whose version kept changing. */
    public long accountId() {
        return accountId;
    }

    /** How many attempts were made. */
    public int attempts() {
        return attempts;
    }
}

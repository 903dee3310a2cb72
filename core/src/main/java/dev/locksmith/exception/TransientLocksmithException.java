package dev.locksmith.exception;

import dev.locksmith.RetryPolicy;
import org.jspecify.annotations.Nullable;

/**
 * A failure that running the whole transaction again may cure: PostgreSQL aborted it as a
 * deadlock victim ({@link DeadlockException}), could not serialize it
 * ({@link SerializationFailureException}), or a bounded lock wait ran out
 * ({@link LockNotAvailableException}). The transaction is rolled back; nothing it did is
 * kept. Whether locksmith retries it is up to the {@link RetryPolicy}; code that runs its own
 * transactions can catch this type to do the same.
 */
public abstract class TransientLocksmithException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /**
     * Wraps a database error.
     *
     * @param message what failed
     * @param sqlState the PostgreSQL SQLState
     * @param cause the original exception
     */
    protected TransientLocksmithException(@Nullable String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }
}

package dev.locksmith.exception;

import org.jspecify.annotations.Nullable;

/** A row or advisory lock was not available ({@code 55P03}): a {@code NOWAIT} found it held, or a transaction-scoped {@code lock_timeout} expired. The transaction is aborted. */
public final class LockNotAvailableException extends TransientLocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    LockNotAvailableException(@Nullable String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }
}

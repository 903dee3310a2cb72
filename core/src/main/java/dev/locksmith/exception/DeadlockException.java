package dev.locksmith.exception;

import org.jspecify.annotations.Nullable;

/** PostgreSQL detected a deadlock ({@code 40P01}) and aborted this transaction as the victim. Retry the whole transaction; better, lock rows in a consistent order. */
public final class DeadlockException extends TransientLocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    DeadlockException(@Nullable String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }
}

package dev.locksmith.exception;

import org.jspecify.annotations.Nullable;

/** A database error locksmith has no more specific type for; {@link #sqlState()} says which. */
public final class DatabaseException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    DatabaseException(@Nullable String message, @Nullable String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }
}

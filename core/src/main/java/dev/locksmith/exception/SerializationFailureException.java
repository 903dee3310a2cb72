package dev.locksmith.exception;

import org.jspecify.annotations.Nullable;

/** A SERIALIZABLE or REPEATABLE READ transaction could not be serialized ({@code 40001}). Retry the whole transaction. */
public final class SerializationFailureException extends TransientLocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    SerializationFailureException(@Nullable String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }
}

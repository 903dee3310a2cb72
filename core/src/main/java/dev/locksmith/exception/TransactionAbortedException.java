package dev.locksmith.exception;

import org.jspecify.annotations.Nullable;

/** A statement ran in a transaction that an earlier error had already aborted ({@code 25P02}). Roll back; the earlier error is the one to look at. */
public final class TransactionAbortedException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    TransactionAbortedException(@Nullable String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }
}

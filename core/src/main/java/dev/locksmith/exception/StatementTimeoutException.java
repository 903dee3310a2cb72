package dev.locksmith.exception;

import org.jspecify.annotations.Nullable;

/** The statement was cancelled ({@code 57014}): {@code statement_timeout} expired or someone cancelled the query. */
public final class StatementTimeoutException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    StatementTimeoutException(@Nullable String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }
}

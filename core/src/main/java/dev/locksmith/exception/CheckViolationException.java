package dev.locksmith.exception;

import org.jspecify.annotations.Nullable;

/** A {@code CHECK} constraint rejected the row ({@code 23514}), for example {@code accounts_balance_non_negative}. */
public final class CheckViolationException extends ConstraintViolationException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    CheckViolationException(@Nullable String message, String sqlState, @Nullable String constraint, Throwable cause) {
        super(message, sqlState, constraint, cause);
    }
}

package dev.locksmith.exception;

import org.jspecify.annotations.Nullable;

/** A unique constraint or unique index rejected the row ({@code 23505}). */
public final class UniqueViolationException extends ConstraintViolationException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    UniqueViolationException(@Nullable String message, String sqlState, @Nullable String constraint, Throwable cause) {
        super(message, sqlState, constraint, cause);
    }
}

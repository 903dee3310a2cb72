package dev.locksmith.exception;

import org.jspecify.annotations.Nullable;

/** A constraint rejected the statement; {@link #constraint()} names it when PostgreSQL said which. */
public class ConstraintViolationException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** The constraint PostgreSQL named, or null. */
    private final @Nullable String constraint;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    ConstraintViolationException(
            @Nullable String message, String sqlState, @Nullable String constraint, Throwable cause) {
        super(message, sqlState, cause);
        this.constraint = constraint;
    }

    /**
     * The violated constraint, for telling one rule from another without parsing the message.
     *
     * @return its name as PostgreSQL reported it (for example {@code accounts_balance_non_negative}),
     *     or null when the server did not name one
     */
    public @Nullable String constraint() {
        return constraint;
    }
}

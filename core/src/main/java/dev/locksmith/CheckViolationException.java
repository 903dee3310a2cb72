package dev.locksmith;

/** A {@code CHECK} constraint rejected the row ({@code 23514}), for example {@code accounts_balance_non_negative}. */
public class CheckViolationException extends ConstraintViolationException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    public CheckViolationException(String message, String sqlState, String constraint, Throwable cause) {
        super(message, sqlState, constraint, cause);
    }
}

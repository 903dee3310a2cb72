package dev.locksmith;

/** A unique constraint or unique index rejected the row ({@code 23505}). */
public class UniqueViolationException extends ConstraintViolationException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    public UniqueViolationException(String message, String sqlState, String constraint, Throwable cause) {
        super(message, sqlState, constraint, cause);
    }
}

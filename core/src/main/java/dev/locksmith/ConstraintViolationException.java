package dev.locksmith;

/** A constraint rejected the statement; {@link #constraint()} names it when PostgreSQL said which. */
public class ConstraintViolationException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    private final String constraint;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    public ConstraintViolationException(String message, String sqlState, String constraint, Throwable cause) {
        super(message, sqlState, cause);
        this.constraint = constraint;
    }

    /** The violated constraint's name, or null when the server did not report one. */
    public String constraint() {
        return constraint;
    }
}

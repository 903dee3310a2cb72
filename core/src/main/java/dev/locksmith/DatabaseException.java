package dev.locksmith;

/** A database error locksmith has no more specific type for; {@link #sqlState()} says which. */
public class DatabaseException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    public DatabaseException(String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }

}

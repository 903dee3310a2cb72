package dev.locksmith;

/** A SERIALIZABLE or REPEATABLE READ transaction could not be serialized ({@code 40001}). Retry the whole transaction. */
public class SerializationFailureException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    public SerializationFailureException(String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }

    @Override
    public boolean isTransient() {
        return true;
    }
}

package dev.locksmith;

/** A row or advisory lock was not available ({@code 55P03}): a {@code NOWAIT} found it held, or a transaction-scoped {@code lock_timeout} expired. The transaction is aborted. */
public class LockNotAvailableException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    public LockNotAvailableException(String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }

    @Override
    public boolean isTransient() {
        return true;
    }
}

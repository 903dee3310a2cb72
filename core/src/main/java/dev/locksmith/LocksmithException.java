package dev.locksmith;

/**
 * Root of every exception locksmith throws. Unchecked.
 *
 * <p>Database failures are translated in one place ({@link PgErrors}) into subclasses named
 * for the PostgreSQL condition; each keeps the SQLState and the original exception as its
 * cause. Domain failures (insufficient funds, an optimistic conflict after every retry) are
 * subclasses without a SQLState.
 */
public class LocksmithException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String sqlState;

    /** A domain failure, not caused by a database error. */
    public LocksmithException(String message) {
        this(message, null, null);
    }

    /**
     * @param message what failed
     * @param sqlState the PostgreSQL SQLState, or null for a failure that is not a database error
     * @param cause the original exception, or null
     */
    public LocksmithException(String message, String sqlState, Throwable cause) {
        super(message, cause);
        this.sqlState = sqlState;
    }

    /** The five-character PostgreSQL SQLState, or null when this is not a database error. */
    public String sqlState() {
        return sqlState;
    }

    /**
     * True when running the whole transaction again may succeed: deadlocks, serialization
     * failures and lock timeouts. Whether locksmith retries is up to the {@link RetryPolicy}.
     */
    public boolean isTransient() {
        return false;
    }
}

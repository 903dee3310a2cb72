package dev.locksmith;

/** PostgreSQL detected a deadlock ({@code 40P01}) and aborted this transaction as the victim. Retry the whole transaction; better, lock rows in a consistent order. */
public class DeadlockException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    public DeadlockException(String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }

    @Override
    public boolean isTransient() {
        return true;
    }
}

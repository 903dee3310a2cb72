package dev.locksmith.internal;

/**
 * Carries a checked exception of the caller's code through an API that lets only unchecked ones
 * out (jOOQ's transaction callbacks, a {@code Supplier}), without being mistaken for a database
 * error on the way; the receiving side unwraps it with {@link #checked()}. <b>Internal: not API.</b>
 */
public final class CheckedFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Wraps {@code cause}. */
    public CheckedFailure(Exception cause) {
        super(cause.toString(), cause, false, false);
    }

    /** The caller's exception. */
    @SuppressWarnings("NullAway") // getCause() is the non-null cause the constructor set; initCause cannot change it
    public Exception checked() {
        return (Exception) getCause();
    }
}

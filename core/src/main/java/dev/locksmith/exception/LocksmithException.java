package dev.locksmith.exception;

import dev.locksmith.RetryPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Root of every exception locksmith throws. Unchecked.
 *
 * <p>Database failures are translated in one place ({@link PgErrors}) into subclasses named
 * for the PostgreSQL condition; each keeps the SQLState and the original exception as its
 * cause. Domain failures (insufficient funds, an optimistic conflict after every retry) are
 * subclasses without a SQLState.
 *
 * <p>Failures that running the whole transaction again may cure (deadlock, serialization
 * failure, lock not available) extend {@link TransientLocksmithException}; catch that type to
 * retry on your own, or let a {@link RetryPolicy} do it. Everything else is permanent for the
 * work as written. {@code dev.locksmith.schema.SchemaMigrationException}, thrown while the
 * schema is applied, is outside this family on purpose: the schema module is usable without
 * core (a deployment pipeline needs no jOOQ), so it cannot extend a core type.
 */
public abstract class LocksmithException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The SQLState, or null for a failure that is not a database error. */
    private final @Nullable String sqlState;

    /**
     * A domain failure, not caused by a database error.
     *
     * @param message what failed
     */
    protected LocksmithException(@Nullable String message) {
        this(message, null, null);
    }

    /**
     * A failure with the database error it came from, if any.
     *
     * @param message what failed
     * @param sqlState the PostgreSQL SQLState, or null for a failure that is not a database error
     * @param cause the original exception, or null
     */
    protected LocksmithException(@Nullable String message, @Nullable String sqlState, @Nullable Throwable cause) {
        super(message, cause);
        this.sqlState = sqlState;
    }

    /**
     * The PostgreSQL condition, for code that must tell apart cases locksmith gives no type of
     * their own (see the table in {@link PgErrors}).
     *
     * @return the five-character SQLState, such as {@code 40P01}; null when this is not a
     *     database error (a domain failure, or a failure whose cause chain had no SQLState)
     */
    public @Nullable String sqlState() {
        return sqlState;
    }
}

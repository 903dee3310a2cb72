package dev.locksmith.internal;

import dev.locksmith.exception.LocksmithException;
import dev.locksmith.exception.PgErrors;
import java.sql.SQLException;
import java.util.function.Supplier;
import org.jooq.exception.DataAccessException;

/** Database errors leave repositories translated by {@link PgErrors}. <b>Internal: not API.</b> */
public final class Errors {

    private Errors() {}

    /**
     * Whether {@code failure} came from the database (a jOOQ {@link DataAccessException} or
     * anything carrying a {@link SQLException}) or is already a {@link LocksmithException}.
     * Other exceptions, such as a caller's own, are not translated by locksmith.
     */
    public static boolean isDatabaseError(Throwable failure) {
        return failure instanceof LocksmithException
                || failure instanceof DataAccessException
                || carriesSqlException(failure);
    }

    /**
     * Rethrows {@code failure} translated when it is a database error, and as it is otherwise.
     * Declared to return an exception so callers can write {@code throw rethrow(e)}.
     */
    public static RuntimeException rethrow(RuntimeException failure) {
        throw isDatabaseError(failure) ? PgErrors.translate(failure) : failure;
    }

    /**
     * Runs {@code work}; database errors leave it translated with {@link PgErrors#translate(Throwable)},
     * other runtime exceptions unchanged. Repositories wrap their statements in this so callers
     * only ever see locksmith types for database failures.
     */
    public static <T> T translating(Supplier<T> work) {
        try {
            return work.get();
        } catch (RuntimeException e) {
            throw rethrow(e);
        }
    }

    private static boolean carriesSqlException(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException) {
                return true;
            }
        }
        return false;
    }
}

package dev.locksmith.internal;

import java.sql.Savepoint;
import java.util.function.Supplier;
import org.jooq.DSLContext;

/**
 * Runs several statements inside the caller's open transaction as one unit: if any fails,
 * only this unit is rolled back (to a savepoint), and the caller's transaction stays usable.
 * Uses the JDBC connection directly so it works whoever manages the transaction (jOOQ,
 * Spring, plain JDBC). <b>Internal: not API.</b>
 */
public final class Savepoints {

    private Savepoints() {}

    /** Runs {@code body} under a savepoint of the caller's open transaction (checked by the caller). */
    public static <T> T unit(DSLContext tx, Supplier<T> body) {
        return Errors.translating(() -> tx.connectionResult(connection -> {
            Savepoint savepoint = connection.setSavepoint();
            T result;
            try {
                result = body.get();
                // inside the try: a RELEASE that fails (the body swallowed an error that aborted the
                // transaction) must roll back to the savepoint too, or the caller's transaction
                // stays aborted
                connection.releaseSavepoint(savepoint);
            } catch (RuntimeException | Error | java.sql.SQLException e) {
                try {
                    connection.rollback(savepoint);
                } catch (java.sql.SQLException rollbackFailure) {
                    e.addSuppressed(rollbackFailure);
                }
                throw e;
            }
            return result;
        }));
    }
}

package dev.locksmith.internal;

import java.sql.Connection;
import org.jooq.DSLContext;

/** Refuses operations that need the caller's open transaction. <b>Internal: not API.</b> */
public final class TransactionGuard {

    private TransactionGuard() {}

    /**
     * Fails with {@link IllegalStateException} unless {@code tx} is inside an open transaction.
     * Operations of several statements that promise to commit with the caller call this first:
     * in auto-commit mode they would commit halfway. Costs no round trip.
     *
     * @param tx the caller's context
     * @param operation named in the message
     */
    public static void requireOpen(DSLContext tx, String operation) {
        boolean autoCommit = Errors.translating(() -> tx.connectionResult(Connection::getAutoCommit));
        if (autoCommit) {
            throw new IllegalStateException(operation + " needs the caller's open transaction "
                    + "(call it inside dsl.transaction(...)); the connection is in auto-commit mode");
        }
    }
}

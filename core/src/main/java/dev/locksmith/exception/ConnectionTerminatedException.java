package dev.locksmith.exception;

import dev.locksmith.Transactions;
import org.jspecify.annotations.Nullable;

/**
 * The server ended the connection ({@code 57P01} administrator command such as
 * {@code pg_terminate_backend}, {@code 57P02}/{@code 57P03}, or a class {@code 08} connection
 * failure) before the transaction's {@code COMMIT} was sent, or locksmith established that it
 * rolled back: the transaction did not commit. When the connection failed during
 * {@code COMMIT} and the outcome could not be established, {@link Transactions} reports
 * {@link CommitOutcomeUnknownException} instead; a bare repository call inside a transaction
 * that someone else commits cannot tell, so this type then only says the connection is gone.
 */
public final class ConnectionTerminatedException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    ConnectionTerminatedException(@Nullable String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }
}

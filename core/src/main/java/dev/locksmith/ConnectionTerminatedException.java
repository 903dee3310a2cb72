package dev.locksmith;

/** The server ended the connection ({@code 57P01} administrator command such as {@code pg_terminate_backend}, {@code 57P02}/{@code 57P03}, or a class {@code 08} connection failure). The transaction did not commit. */
public class ConnectionTerminatedException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** Wraps a database error; see {@link PgErrors#translate(Throwable)}. */
    public ConnectionTerminatedException(String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }

}

package dev.locksmith;

/**
 * How the application's connections reach PostgreSQL, for the features that depend on one
 * client keeping one server session.
 *
 * <p>Behind PgBouncer in transaction pooling mode, a client gets a server connection for one
 * transaction at a time, and the next transaction may run on another one. Everything locksmith
 * does inside a transaction keeps working there (row locks, transaction-scoped advisory locks,
 * {@code set_config(..., true)} bounded waits, the pool, the queue's transactional and leased
 * claims), but session state does not: a session advisory lock stays on a server connection the
 * pooler hands to other clients (who then "acquire" it again), its unlock may run elsewhere, and
 * {@code LISTEN} hears nothing. Declaring {@link #TRANSACTION} makes those session-scoped
 * features refuse with {@link IllegalStateException} instead of misbehaving quietly.
 */
public enum PoolingMode {
    /**
     * Each connection is one server session for as long as it is held: a direct connection, a
     * client-side pool such as HikariCP, or PgBouncer in session mode. The default.
     */
    SESSION,
    /**
     * A transaction-pooling proxy (PgBouncer {@code pool_mode = transaction}) sits between the
     * application and the server: session advisory locks and LISTEN wake-ups are refused.
     */
    TRANSACTION;

    /**
     * Fails with {@link IllegalStateException} when this mode cannot keep {@code feature}'s
     * session state.
     *
     * @param feature named in the message, e.g. {@code "a session advisory lock"}
     * @param instead what to use instead, named in the message
     */
    public void requireSessionState(String feature, String instead) {
        if (this == TRANSACTION) {
            throw new IllegalStateException(feature + " needs one server session per connection, which "
                    + "PoolingMode.TRANSACTION (a transaction-pooling proxy such as PgBouncer) does not give: "
                    + instead);
        }
    }
}

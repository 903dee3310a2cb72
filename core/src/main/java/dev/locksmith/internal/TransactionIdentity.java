package dev.locksmith.internal;

import java.sql.ResultSet;
import java.sql.SQLException;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;

/**
 * A transaction's id ({@code xid8}) and the backend running it: what
 * {@link dev.locksmith.Transactions} needs to look up the outcome of a {@code COMMIT} whose
 * connection died. It costs a round trip to ask for it before {@code COMMIT}; a statement the
 * transaction runs anyway can return it instead ({@link #XID}, {@link #PID} in its select list
 * or {@code RETURNING}) and {@linkplain #report report} it, and the round trip is saved.
 * Reports are per thread: the body of a transaction runs on the thread that runs the
 * transaction. <b>Internal: not API.</b>
 *
 * @param xid the transaction id; null when the transaction has none (it wrote nothing)
 * @param pid the backend process id
 */
public record TransactionIdentity(@Nullable Long xid, int pid) {

    /** {@code pg_current_xact_id()::text AS locksmith_xid}: assigns an id if there is none yet. */
    public static final Field<String> XID = DSL.function("pg_current_xact_id", Object.class)
            .cast(SQLDataType.VARCHAR)
            .as("locksmith_xid");
    /** {@code pg_backend_pid() AS locksmith_pid}. */
    public static final Field<Integer> PID =
            DSL.function("pg_backend_pid", SQLDataType.INTEGER).as("locksmith_pid");

    private static final ThreadLocal<TransactionIdentity> REPORTED = new ThreadLocal<>();

    /** Reports the identity read from {@code row}, which has the {@link #XID} and {@link #PID} columns. */
    public static void report(ResultSet row) throws SQLException {
        String xid = row.getString(XID.getName());
        REPORTED.set(new TransactionIdentity(xid == null ? null : Long.valueOf(xid), row.getInt(PID.getName())));
    }

    /** Forgets any report of this thread. */
    public static void clear() {
        REPORTED.remove();
    }

    /** The identity this thread reported since {@link #clear()}, and forgets it; null if none. */
    public static @Nullable TransactionIdentity take() {
        TransactionIdentity identity = REPORTED.get();
        REPORTED.remove();
        return identity;
    }
}

package dev.locksmith.audit;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Something that holds the MVCC horizon of the database back: while it does, VACUUM (autovacuum
 * and the workers' own) cannot remove any row that died after the transaction it holds, in the
 * jobs table or any other. Read by {@link HorizonReport}; what PostgreSQL reported at that moment,
 * which may have changed since.
 *
 * @param kind what holds it: a session, a replication slot, a prepared transaction or a standby
 * @param pid the server process: the session's, the standby's WAL sender, or the process using
 *     a slot right now; empty for a prepared transaction and an unused slot
 * @param name the slot's name or the prepared transaction's global id; empty otherwise
 * @param application {@code application_name} of a session or standby, when it set one
 * @param user the role of the session, standby or prepared transaction
 * @param client the client's address of a session or standby; empty for local (Unix-socket)
 *     connections and when hidden
 * @param database the database it belongs to; empty for a physical slot and a standby, which
 *     hold every database of the server
 * @param state a session's {@code pg_stat_activity.state} ({@code idle in transaction},
 *     {@code active}, ...), a standby's replication state, or a slot's {@code active} /
 *     {@code inactive}; empty when the reading role may not see it
 * @param since when a session's transaction began or a transaction was prepared; empty for
 *     slots and standbys (PostgreSQL does not record when their xmin was set) and when the
 *     reading role may not see it
 * @param queryStart when a session's latest statement began; empty otherwise
 * @param query a session's latest statement, cut to 1,000 characters; empty otherwise or when
 *     hidden
 * @param xmin the oldest transaction id it keeps visible (a 32-bit id, as PostgreSQL shows it)
 * @param xminAge how many transactions have started since {@code xmin}: {@code age(xmin)}
 * @param age how long ago {@link #since()} was, by the database's clock; empty where
 *     {@code since} is
 */
public record HorizonHolder(
        Kind kind,
        OptionalInt pid,
        Optional<String> name,
        Optional<String> application,
        Optional<String> user,
        Optional<String> client,
        Optional<String> database,
        Optional<String> state,
        Optional<OffsetDateTime> since,
        Optional<OffsetDateTime> queryStart,
        Optional<String> query,
        long xmin,
        long xminAge,
        Optional<Duration> age) {

    /** What holds the horizon back. */
    public enum Kind {
        /**
         * A session of this database with an open transaction: its snapshot ({@code backend_xmin},
         * a {@code REPEATABLE READ} or {@code SERIALIZABLE} transaction, a running statement, an
         * open cursor, {@code pg_dump}) or its own transaction id ({@code backend_xid}, a
         * transaction that wrote and stays open, {@code idle in transaction}).
         */
        BACKEND,
        /**
         * A replication slot whose {@code xmin} is set (a physical slot of a standby with
         * {@code hot_standby_feedback}): it holds every database of the server, even while no
         * standby is connected.
         */
        REPLICATION_SLOT,
        /**
         * A transaction prepared in this database ({@code PREPARE TRANSACTION}) and neither
         * committed nor rolled back: it holds the horizon until someone does, across restarts.
         */
        PREPARED_TRANSACTION,
        /**
         * A standby connected without a slot and with {@code hot_standby_feedback = on}: its
         * WAL sender carries the standby's oldest snapshot ({@code pg_stat_replication.backend_xmin})
         * and holds every database of the server.
         */
        STANDBY
    }

    /**
     * Checks the values.
     *
     * @param kind not null
     * @param pid not null
     * @param name not null
     * @param application not null
     * @param user not null
     * @param client not null
     * @param database not null
     * @param state not null
     * @param since not null
     * @param queryStart not null
     * @param query not null
     * @param xmin a transaction id, 0 to 2^32 - 1
     * @param xminAge not negative
     * @param age not null
     * @throws IllegalArgumentException for an out-of-range number
     */
    public HorizonHolder {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(pid, "pid");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(application, "application");
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(since, "since");
        Objects.requireNonNull(queryStart, "queryStart");
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(age, "age");
        if (xmin < 0 || xmin > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("xmin must be a 32-bit transaction id, was " + xmin);
        }
        if (xminAge < 0) {
            throw new IllegalArgumentException("xminAge must not be negative, was " + xminAge);
        }
    }

    /**
     * Who it is, in a few words for a log line or a page: {@code session pid 4711 (application
     * report, user app, client 10.0.0.7)}, {@code replication slot standby_1 (pid 4712)},
     * {@code prepared transaction 'gid-1' (user app)}, {@code standby pid 4713 (application
     * walreceiver, client 10.0.0.8)}.
     *
     * @return the description
     */
    public String identity() {
        StringBuilder s = new StringBuilder(
                switch (kind) {
                    case BACKEND -> "session";
                    case REPLICATION_SLOT -> "replication slot";
                    case PREPARED_TRANSACTION -> "prepared transaction";
                    case STANDBY -> "standby";
                });
        if (kind == Kind.PREPARED_TRANSACTION) {
            name.ifPresent(n -> s.append(" '").append(n).append('\''));
        } else {
            name.ifPresent(n -> s.append(' ').append(n));
        }
        StringBuilder details = new StringBuilder();
        if (kind == Kind.REPLICATION_SLOT) {
            pid.ifPresent(p -> details.append("pid ").append(p));
        } else {
            pid.ifPresent(p -> s.append(" pid ").append(p));
        }
        application.filter(a -> !a.isEmpty()).ifPresent(a -> append(details, "application ", a));
        user.ifPresent(u -> append(details, "user ", u));
        client.ifPresent(c -> append(details, "client ", c));
        if (!details.isEmpty()) {
            s.append(" (").append(details).append(')');
        }
        return s.toString();
    }

    private static void append(StringBuilder details, String label, String value) {
        if (!details.isEmpty()) {
            details.append(", ");
        }
        details.append(label).append(value);
    }
}

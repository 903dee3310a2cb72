package dev.locksmith.advisory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session-level advisory lock and the connection that holds it. {@link #close()} unlocks on
 * that same connection and gives the connection back; use it in try-with-resources so that the
 * lock goes even when the body throws. If unlocking fails, the connection is aborted rather
 * than returned to its pool, because a pooled connection must never carry a lock to its next
 * borrower.
 */
public final class SessionLock implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SessionLock.class);

    private final AdvisoryKey key;
    private final boolean shared;
    private final Connection connection;
    private boolean closed;

    SessionLock(AdvisoryKey key, boolean shared, Connection connection) {
        this.key = key;
        this.shared = shared;
        this.connection = connection;
    }

    /** {@return the locked key} */
    public AdvisoryKey key() {
        return key;
    }

    /** {@return whether this is a shared lock (false: exclusive)} */
    public boolean shared() {
        return shared;
    }

    /** Unlocks and returns the connection. Safe to call twice. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        boolean unlocked = false;
        try (PreparedStatement unlock = connection.prepareStatement(
                shared ? "SELECT pg_advisory_unlock_shared(?, ?)" : "SELECT pg_advisory_unlock(?, ?)")) {
            unlock.setInt(1, key.classId());
            unlock.setInt(2, key.objId());
            try (ResultSet rs = unlock.executeQuery()) {
                unlocked = rs.next() && rs.getBoolean(1);
            }
        } catch (SQLException e) {
            LOG.warn("unlocking {} failed", key, e);
        }
        try {
            if (unlocked) {
                connection.close();
            } else {
                connection.abort(Runnable::run);
            }
        } catch (SQLException e) {
            LOG.warn("closing the connection of {} failed", key, e);
        }
    }
}

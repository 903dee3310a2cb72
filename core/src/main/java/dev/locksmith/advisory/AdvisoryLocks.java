package dev.locksmith.advisory;

import dev.locksmith.LockWait;
import dev.locksmith.Locksmith;
import dev.locksmith.PoolingMode;
import dev.locksmith.exception.PgErrors;
import dev.locksmith.internal.Environment;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.TransactionGuard;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * PostgreSQL advisory locks keyed by {@link AdvisoryKey} (namespace + business key).
 *
 * <p><b>Transaction-scoped</b> locks ({@code pg_advisory_xact_lock} and friends) are taken in the
 * caller's open transaction and released by PostgreSQL when it commits or rolls back; nothing
 * can leak. Prefer them.
 *
 * <p><b>Session-scoped</b> locks ({@code pg_advisory_lock}) outlive transactions and belong to a
 * connection: each {@link SessionLock} holds one connection from the data source until it is
 * closed, and unlocks on that same connection. Behind PgBouncer in transaction pooling mode,
 * session locks are unsafe (the lock stays on a server connection that the pooler hands to
 * other clients, and the unlock may run on a different one); use transaction-scoped locks there,
 * and build this from a {@link Locksmith} environment with {@link PoolingMode#TRANSACTION}, so that the session methods refuse
 * with {@link IllegalStateException} instead of handing out a lock that does not hold.
 *
 * <p>Waits follow {@link LockWait}: {@code forever()} blocks, {@code upTo(d)} fails with
 * {@link dev.locksmith.exception.LockNotAvailableException} after {@code d} (a transaction-scoped
 * {@code lock_timeout}), and {@code noWait()}/{@code skipLocked()} are refused: use the
 * {@code try} methods, which return at once.
 */
public final class AdvisoryLocks {

    private final DataSource dataSource;
    private final PoolingMode poolingMode;

    /**
     * Advisory locks over direct or client-pooled connections ({@link PoolingMode#SESSION}).
     *
     * @param dataSource provides the connections session locks hold
     */
    public AdvisoryLocks(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.poolingMode = PoolingMode.SESSION;
    }

    /**
     * Advisory locks in {@code locksmith}'s environment: session locks hold connections of its data
     * source, and with {@link PoolingMode#TRANSACTION} the session-lock methods refuse.
     *
     * @param locksmith the environment
     * @throws IllegalArgumentException when the environment has no data source (it was built from
     *     a {@code DSLContext} whose connections do not come from one)
     */
    public AdvisoryLocks(Locksmith locksmith) {
        Environment environment = Environment.of(locksmith.dsl());
        this.dataSource = environment.requireDataSource("AdvisoryLocks");
        this.poolingMode = environment.poolingMode();
    }

    // ------------------------------------------------------------------ transaction-scoped

    /**
     * Takes an exclusive transaction-scoped lock ({@code pg_advisory_xact_lock}), waiting as
     * {@code wait} says while another transaction holds the key in either mode. Held until
     * {@code tx} ends; there is no early unlock. Taking it again in the same transaction succeeds
     * at once (advisory locks are reentrant) and is released with the rest.
     *
     * @param tx the caller's open transaction; the lock is released when it commits or rolls back
     * @param key the lock's key
     * @param wait {@link LockWait#forever()} or {@link LockWait#upTo(java.time.Duration)}
     * @throws dev.locksmith.exception.LockNotAvailableException when a bounded wait ran out; the transaction
     *     is aborted
     * @throws IllegalArgumentException for {@code noWait()} or {@code skipLocked()}: use
     *     {@link #tryLock(DSLContext, AdvisoryKey)}
     * @throws IllegalStateException when {@code tx} is in auto-commit mode (the lock would end with
     *     the statement), before anything is sent
     */
    public void lock(DSLContext tx, AdvisoryKey key, LockWait wait) {
        xact(tx, key, wait, "pg_advisory_xact_lock");
    }

    /**
     * Takes a shared transaction-scoped lock ({@code pg_advisory_xact_lock_shared}): any number
     * of transactions may hold it together; it waits only while another transaction holds the
     * key exclusively, and makes exclusive lockers wait. Held until {@code tx} ends.
     *
     * @param tx the caller's open transaction; the lock is released when it commits or rolls back
     * @param key the lock's key
     * @param wait {@link LockWait#forever()} or {@link LockWait#upTo(java.time.Duration)}
     * @throws dev.locksmith.exception.LockNotAvailableException when a bounded wait ran out; the transaction
     *     is aborted
     * @throws IllegalArgumentException for {@code noWait()} or {@code skipLocked()}: use
     *     {@link #tryLockShared(DSLContext, AdvisoryKey)}
     * @throws IllegalStateException when {@code tx} is in auto-commit mode, before anything is sent
     */
    public void lockShared(DSLContext tx, AdvisoryKey key, LockWait wait) {
        xact(tx, key, wait, "pg_advisory_xact_lock_shared");
    }

    /**
     * Tries an exclusive transaction-scoped lock ({@code pg_try_advisory_xact_lock}) without
     * waiting. Contention is an answer, not an error: the transaction stays usable either way.
     *
     * @param tx the caller's open transaction; the lock is released when it commits or rolls back
     * @param key the lock's key
     * @return whether it was taken (and is now held until {@code tx} ends); false when another
     *     transaction holds the key in either mode
     * @throws IllegalStateException when {@code tx} is in auto-commit mode, before anything is sent
     */
    public boolean tryLock(DSLContext tx, AdvisoryKey key) {
        return tryXact(tx, key, "pg_try_advisory_xact_lock");
    }

    /**
     * Tries a shared transaction-scoped lock ({@code pg_try_advisory_xact_lock_shared}) without
     * waiting.
     *
     * @param tx the caller's open transaction; the lock is released when it commits or rolls back
     * @param key the lock's key
     * @return whether it was taken (and is now held until {@code tx} ends); false when another
     *     transaction holds the key exclusively
     * @throws IllegalStateException when {@code tx} is in auto-commit mode, before anything is sent
     */
    public boolean tryLockShared(DSLContext tx, AdvisoryKey key) {
        return tryXact(tx, key, "pg_try_advisory_xact_lock_shared");
    }

    private void xact(DSLContext tx, AdvisoryKey key, LockWait wait, String function) {
        Objects.requireNonNull(key, "key");
        requireBlocking(wait);
        TransactionGuard.requireOpen(tx, "a transaction-scoped advisory lock");
        wait.run(
                tx,
                () -> tx.select(DSL.function(function, Object.class, DSL.val(key.classId()), DSL.val(key.objId())))
                        .fetch());
    }

    private boolean tryXact(DSLContext tx, AdvisoryKey key, String function) {
        Objects.requireNonNull(key, "key");
        TransactionGuard.requireOpen(tx, "a transaction-scoped advisory lock");
        return Errors.translating(() -> tx.select(
                        DSL.function(function, SQLDataType.BOOLEAN, DSL.val(key.classId()), DSL.val(key.objId())))
                .fetchSingle()
                .value1());
    }

    // ------------------------------------------------------------------ session-scoped

    /**
     * Takes an exclusive session lock on a connection of its own, waiting as {@code wait} says
     * (a bounded wait is set in the same statement as the lock, so it holds on the auto-commit
     * connection). The lock and the connection are held until {@link SessionLock#close()},
     * across any number of transactions; while it is held, the data source has one connection
     * fewer.
     *
     * @param key the lock's key
     * @param wait {@link LockWait#forever()} or {@link LockWait#upTo(java.time.Duration)}
     * @return the held lock; close it (try-with-resources) to unlock and give the connection back
     * @throws dev.locksmith.exception.LockNotAvailableException when a bounded wait ran out; the connection
     *     has been given back
     * @throws IllegalArgumentException for {@code noWait()} or {@code skipLocked()}: use
     *     {@link #tryLockSession(AdvisoryKey)}
     * @throws IllegalStateException with {@link PoolingMode#TRANSACTION}, before a connection is taken
     */
    public SessionLock lockSession(AdvisoryKey key, LockWait wait) {
        return session(key, wait, false);
    }

    /**
     * Takes a shared session lock on a connection of its own, as {@link #lockSession}: it waits
     * only while another session holds the key exclusively.
     *
     * @param key the lock's key
     * @param wait {@link LockWait#forever()} or {@link LockWait#upTo(java.time.Duration)}
     * @return the held lock; close it to unlock and give the connection back
     * @throws dev.locksmith.exception.LockNotAvailableException when a bounded wait ran out
     * @throws IllegalArgumentException for {@code noWait()} or {@code skipLocked()}
     * @throws IllegalStateException with {@link PoolingMode#TRANSACTION}, before a connection is taken
     */
    public SessionLock lockSessionShared(AdvisoryKey key, LockWait wait) {
        return session(key, wait, true);
    }

    /**
     * Tries an exclusive session lock; empty at once when another session holds it. Borrows a
     * connection for the attempt and keeps it only when the lock was taken.
     *
     * @param key the lock's key
     * @return the held lock (close it to unlock); empty when another session holds the key in
     *     either mode
     * @throws IllegalStateException with {@link PoolingMode#TRANSACTION}, before a connection is taken
     */
    public Optional<SessionLock> tryLockSession(AdvisoryKey key) {
        return trySession(key, false);
    }

    /**
     * Tries a shared session lock; empty at once when another session holds it exclusively.
     *
     * @param key the lock's key
     * @return the held lock (close it to unlock); empty when another session holds the key
     *     exclusively
     * @throws IllegalStateException with {@link PoolingMode#TRANSACTION}, before a connection is taken
     */
    public Optional<SessionLock> tryLockSessionShared(AdvisoryKey key) {
        return trySession(key, true);
    }

    private SessionLock session(AdvisoryKey key, LockWait wait, boolean shared) {
        Objects.requireNonNull(key, "key");
        requireBlocking(wait);
        requireSessions();
        String function = shared ? "pg_advisory_lock_shared" : "pg_advisory_lock";
        // In auto-commit mode the statement is its own transaction: set_config(..., true) bounds
        // the wait of the lock call that follows it in the same statement, then vanishes, while
        // the session lock stays.
        String sql = wait.kind() == LockWait.Kind.BOUNDED
                ? (shared
                        ? "SELECT set_config('lock_timeout', ?, true), pg_advisory_lock_shared(?, ?)"
                        : "SELECT set_config('lock_timeout', ?, true), pg_advisory_lock(?, ?)")
                : (shared ? "SELECT NULL, pg_advisory_lock_shared(?, ?)" : "SELECT NULL, pg_advisory_lock(?, ?)");
        Connection connection = open();
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            int i = 1;
            if (wait.kind() == LockWait.Kind.BOUNDED) {
                statement.setString(i++, Long.toString(wait.boundMillis()));
            }
            statement.setInt(i++, key.classId());
            statement.setInt(i, key.objId());
            statement.executeQuery().close();
            return new SessionLock(key, shared, connection);
        } catch (SQLException | RuntimeException e) {
            closeQuietly(connection, e);
            throw PgErrors.translate(new IllegalStateException(function + " " + key + " failed", e));
        }
    }

    private Optional<SessionLock> trySession(AdvisoryKey key, boolean shared) {
        Objects.requireNonNull(key, "key");
        requireSessions();
        Connection connection = open();
        try (PreparedStatement statement = connection.prepareStatement(
                shared ? "SELECT pg_try_advisory_lock_shared(?, ?)" : "SELECT pg_try_advisory_lock(?, ?)")) {
            statement.setInt(1, key.classId());
            statement.setInt(2, key.objId());
            boolean taken;
            try (ResultSet rs = statement.executeQuery()) {
                taken = rs.next() && rs.getBoolean(1);
            }
            if (!taken) {
                connection.close();
                return Optional.empty();
            }
            return Optional.of(new SessionLock(key, shared, connection));
        } catch (SQLException | RuntimeException e) {
            closeQuietly(connection, e);
            throw PgErrors.translate(new IllegalStateException("try lock " + key + " failed", e));
        }
    }

    private void requireSessions() {
        poolingMode.requireSessionState(
                "a session advisory lock",
                "use the transaction-scoped lock(tx, ...) or tryLock(tx, ...) inside a transaction");
    }

    private Connection open() {
        try {
            Connection connection = dataSource.getConnection();
            connection.setAutoCommit(true);
            return connection;
        } catch (SQLException e) {
            throw PgErrors.translate(e);
        }
    }

    private static void closeQuietly(Connection connection, Exception failure) {
        try {
            connection.close();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    private static void requireBlocking(LockWait wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.kind() == LockWait.Kind.NO_WAIT || wait.kind() == LockWait.Kind.SKIP_LOCKED) {
            throw new IllegalArgumentException(wait + " does not apply to advisory locks; use the try methods");
        }
    }
}

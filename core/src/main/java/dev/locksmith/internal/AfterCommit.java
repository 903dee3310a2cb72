package dev.locksmith.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.jooq.DSLContext;
import org.jooq.TransactionContext;
import org.jooq.TransactionListener;
import org.jooq.impl.DefaultTransactionProvider;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work to run when the transaction open on this thread commits: the transactions locksmith can
 * see end, a jOOQ transaction started on a {@code Locksmith} environment's context (its
 * configuration carries {@link #LISTENER}), or a scope a worker opens around a transaction it runs
 * by hand (two-phase). Nested transactions (savepoints) count: the work runs at the outermost
 * commit; when the outermost transaction rolls back, what was registered to run otherwise runs
 * instead. <b>Internal: not API.</b>
 */
public final class AfterCommit {

    private static final Logger LOG = LoggerFactory.getLogger(AfterCommit.class);

    /** The open scopes of this thread, outermost first. */
    private static final ThreadLocal<Scope> CURRENT = new ThreadLocal<>();

    /** Opens and closes a scope around every jOOQ transaction of a configuration carrying it. */
    public static final TransactionListener LISTENER = new TransactionListener() {
        @Override
        public void beginEnd(TransactionContext ctx) {
            boolean outermost = CURRENT.get() == null;
            open();
            if (outermost && ctx.configuration().transactionProvider() instanceof DefaultTransactionProvider) {
                CURRENT.get().onePhase = ctx;
            }
        }

        @Override
        public void commitEnd(TransactionContext ctx) {
            close(true);
        }

        @Override
        public void rollbackEnd(TransactionContext ctx) {
            close(false);
        }
    };

    private AfterCommit() {}

    /** What runs when the outermost transaction ends. */
    private static final class Scope {
        int depth;
        /** Whether the transaction will be prepared ({@code PREPARE TRANSACTION}) before it commits. */
        boolean prepared;
        /**
         * A transaction jOOQ's own provider runs, which commits in one phase on its connection;
         * null for any other (another provider's, a worker's by hand).
         */
        @Nullable
        TransactionContext onePhase;
        /** {@link #onePhase}'s connection ({@link #identity}), once asked for. */
        @Nullable
        Object connection;

        final List<Runnable> actions = new ArrayList<>();
        final List<Runnable> otherwise = new ArrayList<>();
    }

    /**
     * Arranges for {@code action} to run when the transaction open on this thread commits.
     *
     * @param action quick, must not throw
     * @return false when no transaction locksmith can see is open on this thread
     */
    public static boolean register(Runnable action) {
        return register(action, () -> {});
    }

    /**
     * {@link #register(Runnable)}, and {@code otherwise} to run if the outermost transaction
     * rolls back instead.
     *
     * @param action quick, must not throw
     * @param otherwise quick, must not throw
     * @return false when no transaction locksmith can see is open on this thread
     */
    public static boolean register(Runnable action, Runnable otherwise) {
        Scope scope = CURRENT.get();
        if (scope == null) {
            return false;
        }
        scope.actions.add(action);
        scope.otherwise.add(otherwise);
        return true;
    }

    /** Opens a (nested) scope on this thread. */
    public static void open() {
        Scope scope = CURRENT.get();
        if (scope == null) {
            scope = new Scope();
            CURRENT.set(scope);
        }
        scope.depth++;
    }

    /**
     * Opens a (nested) scope on this thread around a transaction that will be prepared before it
     * commits: nothing in it may send {@code NOTIFY}, which PostgreSQL refuses to prepare.
     */
    public static void openPrepared() {
        open();
        CURRENT.get().prepared = true;
    }

    /**
     * Whether this thread is inside a transaction that will be prepared ({@link #openPrepared}):
     * nothing in it may send {@code NOTIFY}, whatever a commit hook knows of another transaction.
     *
     * @return whether such a scope is open
     */
    public static boolean preparedScopeOpen() {
        Scope scope = CURRENT.get();
        return scope != null && scope.prepared;
    }

    /**
     * Whether a statement of {@code statement} runs in the transaction of this thread's scope, and
     * that transaction may send {@code NOTIFY} itself: a jOOQ transaction on its own provider
     * (committed in one phase, on its connection), not one that will be prepared.
     *
     * @param statement the context the statement runs on
     * @return false when no scope is open, its transaction is not one of those, or the statement's
     *     connection is another
     */
    public static boolean mayNotifyIn(DSLContext statement) {
        Scope scope = CURRENT.get();
        if (scope == null || scope.prepared || scope.onePhase == null) {
            return false;
        }
        try {
            if (scope.connection == null) {
                scope.connection = scope.onePhase.dsl().connectionResult(AfterCommit::identity);
            }
            return scope.connection == statement.connectionResult(AfterCommit::identity);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Tells whether a connection is the session a statement of {@code statement} runs on; the
     * statement's connection is looked up at the first test.
     *
     * @param statement the context the statement runs on
     * @return the test; false where the statement's connection cannot be had
     */
    public static Predicate<Connection> sessionOf(DSLContext statement) {
        return new Predicate<>() {
            private @Nullable Object session;

            @Override
            public boolean test(Connection connection) {
                try {
                    if (session == null) {
                        session = statement.connectionResult(AfterCommit::identity);
                    }
                    return session == identity(connection);
                } catch (RuntimeException e) {
                    return false;
                }
            }
        };
    }

    /**
     * A connection as the driver knows it, beneath pools' and jOOQ's wrappers, to tell whether two
     * handles are one session.
     *
     * @param connection a connection, wrapped or not
     * @return the PgJDBC connection, else {@code connection} itself
     */
    private static Object identity(Connection connection) {
        try {
            return connection.isWrapperFor(PGConnection.class) ? connection.unwrap(PGConnection.class) : connection;
        } catch (SQLException e) {
            return connection;
        }
    }

    /**
     * Closes the innermost scope of this thread; at the outermost, runs what was registered to run
     * after a commit when {@code committed}, else what was registered to run otherwise.
     *
     * @param committed whether the transaction committed
     */
    public static void close(boolean committed) {
        Scope scope = CURRENT.get();
        if (scope == null) {
            return;
        }
        if (--scope.depth > 0) {
            return;
        }
        CURRENT.remove();
        for (Runnable action : committed ? scope.actions : scope.otherwise) {
            try {
                action.run();
            } catch (RuntimeException e) {
                LOG.debug("an action at the end of a transaction failed; ignored", e);
            }
        }
    }
}

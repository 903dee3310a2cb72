package dev.locksmith.internal;

import java.util.ArrayList;
import java.util.List;
import org.jooq.TransactionContext;
import org.jooq.TransactionListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work to run when the transaction open on this thread commits: the transactions locksmith can
 * see end, a jOOQ transaction started on a {@code Locksmith} environment's context (its
 * configuration carries {@link #LISTENER}), or a scope a worker opens around a transaction it runs
 * by hand (two-phase). Nested transactions (savepoints) count: the work runs at the outermost
 * commit, and is dropped when the outermost transaction rolls back. <b>Internal: not API.</b>
 */
public final class AfterCommit {

    private static final Logger LOG = LoggerFactory.getLogger(AfterCommit.class);

    /** The open scopes of this thread, outermost first. */
    private static final ThreadLocal<Scope> CURRENT = new ThreadLocal<>();

    /** Opens and closes a scope around every jOOQ transaction of a configuration carrying it. */
    public static final TransactionListener LISTENER = new TransactionListener() {
        @Override
        public void beginEnd(TransactionContext ctx) {
            open();
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

    /** What runs when the outermost transaction commits. */
    private static final class Scope {
        int depth;
        final List<Runnable> actions = new ArrayList<>();
    }

    /**
     * Arranges for {@code action} to run when the transaction open on this thread commits.
     *
     * @param action quick, must not throw
     * @return false when no transaction locksmith can see is open on this thread
     */
    public static boolean register(Runnable action) {
        Scope scope = CURRENT.get();
        if (scope == null) {
            return false;
        }
        scope.actions.add(action);
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
     * Closes the innermost scope of this thread; at the outermost, runs what was registered when
     * {@code committed}, else drops it.
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
        if (committed) {
            for (Runnable action : scope.actions) {
                try {
                    action.run();
                } catch (RuntimeException e) {
                    LOG.debug("an after-commit action failed; ignored", e);
                }
            }
        }
    }
}

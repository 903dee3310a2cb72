package dev.locksmith.spring;

import dev.locksmith.CommitHook;
import java.sql.Connection;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Tells locksmith when a Spring-managed transaction commits: the action runs in an after-commit
 * synchronization of the transaction open on this thread, so an enqueue inside a
 * {@code @Transactional} method wakes workers once the method's transaction has committed. The
 * starter's {@code Locksmith} bean has one; give one to a {@code Locksmith} bean of your own with
 * {@code Locksmith.builder(dsl).commitHook(new SpringCommitHook())}, or
 * {@link #localTransactions()}.
 *
 * <p>A hook that knows the application's transactions are local ones (each on one connection,
 * committed in one phase, never prepared as a JTA transaction may be) also lets one enqueue at a
 * time per data source send the workers' {@code NOTIFY} inside its own transaction
 * ({@link CommitHook#afterOnePhaseCommit}), when the enqueue runs on the transaction's connection:
 * other services' workers then hear of the job with the commit, without the separate notification
 * after it. The starter's hook knows it when every {@link PlatformTransactionManager} bean is a
 * {@link ResourceTransactionManager} ({@code DataSourceTransactionManager},
 * {@code JdbcTransactionManager}, {@code JpaTransactionManager}), and none is JTA's. A JTA
 * transaction manager that is not a bean (made by hand for a {@code TransactionTemplate}) is not
 * seen: an application with one gives its {@code Locksmith} bean {@code new SpringCommitHook()}.
 */
public final class SpringCommitHook implements CommitHook {

    static final String SYNCHRONIZATION_MANAGER =
            "org.springframework.transaction.support.TransactionSynchronizationManager";

    /** Spring's JDBC transaction resources: where a transaction's connection is found. */
    static final String CONNECTION_HOLDER = "org.springframework.jdbc.datasource.ConnectionHolder";

    private final BooleanSupplier localTransactions;
    private volatile @Nullable Boolean local;

    /**
     * A hook on the transaction synchronization of the calling thread's Spring transaction, which
     * never lets an enqueue send the {@code NOTIFY} inside the transaction.
     */
    public SpringCommitHook() {
        this(() -> false);
    }

    private SpringCommitHook(BooleanSupplier localTransactions) {
        this.localTransactions = localTransactions;
    }

    /**
     * A hook for an application whose Spring transactions are all local ones: run by a
     * {@code DataSourceTransactionManager}, {@code JdbcTransactionManager} or
     * {@code JpaTransactionManager} (committed in one phase on their connection), never by a JTA
     * transaction manager. Needs {@code spring-jdbc}, which Spring Boot's JDBC and jOOQ starters
     * bring.
     *
     * @return the hook
     */
    public static SpringCommitHook localTransactions() {
        return new SpringCommitHook(() -> true);
    }

    /**
     * The starter's hook: local transactions when {@code beans} has at least one transaction
     * manager and every one is a {@link ResourceTransactionManager}, looked at once, at the first
     * enqueue that might carry its {@code NOTIFY} (every bean is defined by then).
     *
     * @param beans the application's beans
     * @return the hook
     */
    static SpringCommitHook of(ListableBeanFactory beans) {
        return new SpringCommitHook(() -> onlyLocalTransactionManagers(beans));
    }

    /**
     * Whether {@code beans} define at least one transaction manager and every one, by its type (no
     * bean is made for the look, and one that is not an autowiring candidate counts too), is a
     * {@link ResourceTransactionManager}; false when a type cannot be told.
     */
    private static boolean onlyLocalTransactionManagers(ListableBeanFactory beans) {
        try {
            String[] names = BeanFactoryUtils.beanNamesForTypeIncludingAncestors(
                    beans, PlatformTransactionManager.class, true, false);
            if (names.length == 0) {
                return false;
            }
            for (String name : names) {
                Class<?> type = beans.getType(name, false);
                if (type == null || !ResourceTransactionManager.class.isAssignableFrom(type)) {
                    return false;
                }
            }
            return true;
        } catch (RuntimeException unknown) {
            return false;
        }
    }

    /**
     * Registers {@code action} to run after the Spring-managed transaction open on this thread
     * commits.
     *
     * @param action quick, must not throw
     * @return false when no Spring transaction with synchronization is active on this thread
     */
    @Override
    public boolean afterCommit(Runnable action) {
        if (!active()) {
            return false;
        }
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCommit() {
                action.run();
            }
        });
        return true;
    }

    /**
     * Registers {@code committed} and {@code otherwise} on the Spring transaction open on this
     * thread when this hook knows transactions to be local ones and that transaction holds
     * the connection {@code session} accepts.
     *
     * @param session whether a connection is the session the enqueue runs on
     * @param committed runs after the commit
     * @param otherwise runs after a rollback, or when the outcome is unknown
     * @return false when the transaction is not known to be such a one (nothing is registered)
     */
    @Override
    public boolean afterOnePhaseCommit(Predicate<Connection> session, Runnable committed, Runnable otherwise) {
        if (!active() || !local() || !JdbcResources.holdConnection(session)) {
            return false;
        }
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCompletion(int status) {
                (status == STATUS_COMMITTED ? committed : otherwise).run();
            }
        });
        return true;
    }

    private static boolean active() {
        return TransactionSynchronizationManager.isSynchronizationActive()
                && TransactionSynchronizationManager.isActualTransactionActive();
    }

    private boolean local() {
        Boolean known = local;
        if (known == null) {
            known = localTransactions.getAsBoolean();
            local = known;
        }
        return known;
    }

    /** Spring's JDBC resources, in a class of their own: loaded only where spring-jdbc is. */
    private static final class JdbcResources {

        /**
         * Whether a JDBC connection bound to this thread's transaction is one {@code session}
         * accepts; false when a holder's connection cannot be had.
         */
        static boolean holdConnection(Predicate<Connection> session) {
            for (Object resource :
                    TransactionSynchronizationManager.getResourceMap().values()) {
                try {
                    if (resource instanceof ConnectionHolder holder
                            && holder.getConnectionHandle() != null
                            && session.test(holder.getConnection())) {
                        return true;
                    }
                } catch (RuntimeException unusable) {
                    // not a connection this enqueue can be told to run on
                }
            }
            return false;
        }
    }
}

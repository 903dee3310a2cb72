package dev.locksmith.spring;

import dev.locksmith.CommitHook;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Tells locksmith when a Spring-managed transaction commits: the action runs in an after-commit
 * synchronization of the transaction open on this thread, so an enqueue inside a
 * {@code @Transactional} method wakes workers once the method's transaction has committed. The
 * starter's {@code Locksmith} bean has one; give one to a {@code Locksmith} bean of your own with
 * {@code Locksmith.builder(dsl).commitHook(new SpringCommitHook())}.
 */
public final class SpringCommitHook implements CommitHook {

    static final String SYNCHRONIZATION_MANAGER =
            "org.springframework.transaction.support.TransactionSynchronizationManager";

    /** A hook on the transaction synchronization of the calling thread's Spring transaction. */
    public SpringCommitHook() {}

    /**
     * Registers {@code action} to run after the Spring-managed transaction open on this thread
     * commits.
     *
     * @param action quick, must not throw
     * @return false when no Spring transaction with synchronization is active on this thread
     */
    @Override
    public boolean afterCommit(Runnable action) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()
                || !TransactionSynchronizationManager.isActualTransactionActive()) {
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
}

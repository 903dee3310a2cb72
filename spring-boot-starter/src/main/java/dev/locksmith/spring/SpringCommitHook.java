package dev.locksmith.spring;

import dev.locksmith.CommitHook;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Tells locksmith when a Spring-managed transaction commits: {@code action} runs in an
 * after-commit synchronization of the transaction open on this thread, so an enqueue inside a
 * {@code @Transactional} method wakes workers once the method's transaction has committed.
 */
final class SpringCommitHook implements CommitHook {

    static final String SYNCHRONIZATION_MANAGER =
            "org.springframework.transaction.support.TransactionSynchronizationManager";

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

package dev.locksmith;

import java.sql.Connection;
import java.util.function.Predicate;

/**
 * Runs work after the caller's current transaction commits, for transactions locksmith does not
 * start itself. The queue uses it to wake workers once an enqueue has committed, instead of sending
 * {@code NOTIFY} inside the producer's transaction (which serializes every such commit on one
 * database-wide lock). locksmith already sees the commits of auto-committed statements and of
 * jOOQ transactions started on a {@link Locksmith#dsl()}; a hook adds another transaction manager,
 * such as Spring's (the Spring Boot starter installs one). Give it to
 * {@link Locksmith.Builder#commitHook}. An enqueue in a transaction a hook manages never sends the
 * {@code NOTIFY} inside it (the transaction may be an XA one, which PostgreSQL refuses to prepare
 * after a {@code NOTIFY}) unless the hook says, by {@link #afterOnePhaseCommit}, that the
 * transaction commits in one phase on the enqueue's own session.
 */
@FunctionalInterface
public interface CommitHook {

    /**
     * Arranges for {@code action} to run once the transaction open on this thread commits, and
     * never if it rolls back.
     *
     * @param action quick, must not throw; may run on another thread
     * @return false when this hook knows of no transaction open on this thread (nothing is
     *     arranged then)
     */
    boolean afterCommit(Runnable action);

    /**
     * Arranges, as {@link #afterCommit} does, for {@code committed} to run once the transaction
     * open on this thread commits, and for {@code otherwise} to run once it ends in any other way;
     * but only when this hook knows that transaction is a local one on the session {@code session}
     * accepts, committed in one phase: never prepared ({@code PREPARE TRANSACTION}, as an XA or JTA
     * transaction may be). One enqueue at a time per data source may then send the workers'
     * {@code NOTIFY} inside the transaction itself, sparing the separate notification after the
     * commit (PostgreSQL refuses to prepare a transaction that sent one). The default knows of no
     * such transaction.
     *
     * @param session whether a connection, wrapped or not, is the session the enqueue runs on
     * @param committed quick, must not throw; may run on another thread
     * @param otherwise quick, must not throw; runs after a rollback, or when the outcome is unknown
     * @return false when this hook cannot say so (nothing is arranged then)
     */
    default boolean afterOnePhaseCommit(Predicate<Connection> session, Runnable committed, Runnable otherwise) {
        return false;
    }
}

package dev.locksmith;

/**
 * Runs work after the caller's current transaction commits, for transactions locksmith does not
 * start itself. The queue uses it to wake workers once an enqueue has committed, instead of sending
 * {@code NOTIFY} inside the producer's transaction (which serializes every such commit on one
 * database-wide lock). locksmith already sees the commits of auto-committed statements and of
 * jOOQ transactions started on a {@link Locksmith#dsl()}; a hook adds another transaction manager,
 * such as Spring's (the Spring Boot starter installs one). Give it to
 * {@link Locksmith.Builder#commitHook}. An enqueue in a transaction a hook manages never sends the
 * {@code NOTIFY} inside it (the transaction may be an XA one, which PostgreSQL refuses to prepare
 * after a {@code NOTIFY}): its wake-up always goes after the commit.
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
}

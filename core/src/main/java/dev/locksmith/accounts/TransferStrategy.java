package dev.locksmith.accounts;

/**
 * How {@link Accounts#transfer} keeps concurrent transfers correct. All four share one
 * contract: money is conserved, no balance goes negative, insufficient funds changes nothing,
 * and no two transfers can deadlock on each other (rows are always touched in ascending id
 * order).
 */
public enum TransferStrategy {
    /**
     * Two single-statement updates; the debit is guarded ({@code ... WHERE balance >= amount})
     * so the check and the write are one atomic step. When the credited account has the lower
     * id, its row is locked first ({@code FOR NO KEY UPDATE}) to keep the ascending order.
     * Fewest round trips; no retries needed.
     */
    ATOMIC_GUARD,
    /**
     * Both rows locked with {@code SELECT ... ORDER BY id FOR NO KEY UPDATE}, then read, decide
     * in Java, write. Waits for concurrent transfers of the same accounts; never deadlocks.
     */
    PESSIMISTIC,
    /**
     * Read both rows without locks, then compare-and-swap each on its {@code version}; a lost
     * race rolls the attempt back and retries under the retry policy. Good when conflicts are
     * rare; wasteful under contention.
     */
    OPTIMISTIC,
    /**
     * Plain read-decide-write in a SERIALIZABLE transaction; PostgreSQL aborts one of two
     * conflicting transactions with {@code 40001} and the transfer is retried under the
     * policy. Only {@link Accounts#transfer(long, long, java.math.BigDecimal, TransferStrategy)}
     * can retry; the in-transaction variant needs a caller's SERIALIZABLE transaction.
     */
    SERIALIZABLE
}

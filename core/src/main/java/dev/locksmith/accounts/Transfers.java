package dev.locksmith.accounts;

import static dev.locksmith.codegen.Tables.ACCOUNTS;

import dev.locksmith.codegen.tables.records.AccountsRecord;
import java.math.BigDecimal;
import org.jooq.DSLContext;
import org.jooq.Result;
import org.jooq.impl.DSL;

/** One attempt of each transfer strategy, in a transaction someone else opened. */
final class Transfers {

    /** A compare-and-swap lost: the attempt must be rolled back and retried. */
    static final class VersionConflict extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final long accountId;

        VersionConflict(long accountId) {
            super("version of account " + accountId + " changed", null, false, false);
            this.accountId = accountId;
        }

        long accountId() {
            return accountId;
        }
    }

    private Transfers() {
    }

    static TransferResult.Status once(DSLContext tx, TransferStrategy strategy, long from, long to, BigDecimal amount) {
        switch (strategy) {
            case ATOMIC_GUARD:
                return atomicGuard(tx, from, to, amount);
            case PESSIMISTIC:
                return pessimistic(tx, from, to, amount);
            case SERIALIZABLE:
                return readDecideWrite(tx, read(tx, from, to), from, to, amount);
            case OPTIMISTIC:
                return optimistic(tx, from, to, amount);
            default:
                throw new IllegalArgumentException("unknown strategy " + strategy);
        }
    }

    /**
     * Guarded debit then credit. Rows are locked in ascending id order: when the credited
     * account has the lower id, its row is locked first, so transfers in opposite directions
     * cannot deadlock.
     */
    private static TransferResult.Status atomicGuard(DSLContext tx, long from, long to, BigDecimal amount) {
        if (to < from && tx.select(ACCOUNTS.ID).from(ACCOUNTS).where(ACCOUNTS.ID.eq(to)).forNoKeyUpdate()
                .fetchOptional().isEmpty()) {
            throw new AccountNotFoundException(to);
        }
        int debited = tx.update(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, ACCOUNTS.BALANCE.minus(amount))
                .set(ACCOUNTS.VERSION, ACCOUNTS.VERSION.plus(1L))
                .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                .where(ACCOUNTS.ID.eq(from).and(ACCOUNTS.BALANCE.ge(amount)))
                .execute();
        if (debited == 0) {
            if (!tx.fetchExists(ACCOUNTS, ACCOUNTS.ID.eq(from))) {
                throw new AccountNotFoundException(from);
            }
            return TransferResult.Status.INSUFFICIENT_FUNDS;
        }
        int credited = tx.update(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, ACCOUNTS.BALANCE.plus(amount))
                .set(ACCOUNTS.VERSION, ACCOUNTS.VERSION.plus(1L))
                .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                .where(ACCOUNTS.ID.eq(to))
                .execute();
        if (credited == 0) {
            // The debit is undone by the caller's rollback (own transaction or savepoint).
            throw new AccountNotFoundException(to);
        }
        return TransferResult.Status.TRANSFERRED;
    }

    /** Both rows locked in ascending id order, then read, decide, write. */
    private static TransferResult.Status pessimistic(DSLContext tx, long from, long to, BigDecimal amount) {
        Result<AccountsRecord> rows = tx.selectFrom(ACCOUNTS).where(ACCOUNTS.ID.in(from, to))
                .orderBy(ACCOUNTS.ID).forNoKeyUpdate().fetch();
        return readDecideWrite(tx, rows, from, to, amount);
    }

    private static Result<AccountsRecord> read(DSLContext tx, long from, long to) {
        return tx.selectFrom(ACCOUNTS).where(ACCOUNTS.ID.in(from, to)).orderBy(ACCOUNTS.ID).fetch();
    }

    /**
     * Decides in Java from the rows read and writes computed balances, in ascending id order.
     * Correct only when the rows cannot change in between: locked (PESSIMISTIC) or under
     * SERIALIZABLE, where PostgreSQL aborts one of two conflicting transactions.
     */
    private static TransferResult.Status readDecideWrite(DSLContext tx, Result<AccountsRecord> rows, long from, long to,
            BigDecimal amount) {
        AccountsRecord source = find(rows, from);
        find(rows, to);
        if (source.getBalance().compareTo(amount) < 0) {
            return TransferResult.Status.INSUFFICIENT_FUNDS;
        }
        for (AccountsRecord row : rows) {
            BigDecimal balance = after(row, source, amount);
            tx.update(ACCOUNTS)
                    .set(ACCOUNTS.BALANCE, balance)
                    .set(ACCOUNTS.VERSION, ACCOUNTS.VERSION.plus(1L))
                    .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                    .where(ACCOUNTS.ID.eq(row.getId()))
                    .execute();
        }
        return TransferResult.Status.TRANSFERRED;
    }

    /**
     * Reads both rows without locks, then compare-and-swaps each on its version in ascending id
     * order. Throws {@link VersionConflict} when either swap loses; the caller rolls back.
     */
    static TransferResult.Status optimistic(DSLContext tx, long from, long to, BigDecimal amount) {
        Result<AccountsRecord> rows = read(tx, from, to);
        AccountsRecord source = find(rows, from);
        find(rows, to);
        if (source.getBalance().compareTo(amount) < 0) {
            return TransferResult.Status.INSUFFICIENT_FUNDS;
        }
        for (AccountsRecord row : rows) {
            BigDecimal balance = after(row, source, amount);
            if (Accounts.compareAndSwap(tx, row.getId(), row.getVersion(), balance) == 0) {
                throw new VersionConflict(row.getId());
            }
        }
        return TransferResult.Status.TRANSFERRED;
    }

    /** The balance {@code row} has after the transfer: debited if it is the source, else credited. */
    private static BigDecimal after(AccountsRecord row, AccountsRecord source, BigDecimal amount) {
        return row == source ? row.getBalance().subtract(amount) : row.getBalance().add(amount);
    }

    private static AccountsRecord find(Result<AccountsRecord> rows, long id) {
        for (AccountsRecord row : rows) {
            if (row.getId() == id) {
                return row;
            }
        }
        throw new AccountNotFoundException(id);
    }
}

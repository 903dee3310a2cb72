package dev.locksmith.accounts;

import static dev.locksmith.codegen.Tables.ACCOUNT_TRANSFERS;

import dev.locksmith.codegen.tables.records.AccountTransfersRecord;
import dev.locksmith.internal.RenderedQuery;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.jooq.DSLContext;

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

    private Transfers() {}

    /**
     * One attempt of {@code request} in {@code tx}. With a transfer id, the id is recorded first
     * ({@code INSERT ... ON CONFLICT DO NOTHING}: a concurrent transfer with the same id waits
     * here for the first one to end); an id already recorded means the money moved before. The
     * id row is removed again when the funds are insufficient, so only applied transfers keep
     * one.
     */
    static TransferResult.Status attempt(AccountStatements sql, DSLContext tx, TransferRequest request) {
        String transferId = request.transferId().orElse(null);
        if (transferId != null && !recordId(tx, request, transferId)) {
            return TransferResult.Status.ALREADY_TRANSFERRED;
        }
        TransferResult.Status status =
                once(sql, tx, request.strategy(), request.from(), request.to(), request.amount());
        if (transferId != null && status == TransferResult.Status.INSUFFICIENT_FUNDS) {
            tx.deleteFrom(ACCOUNT_TRANSFERS)
                    .where(ACCOUNT_TRANSFERS.TRANSFER_ID.eq(transferId))
                    .execute();
        }
        return status;
    }

    /** Records the id; false when it was recorded before, for this same transfer (else it throws). */
    private static boolean recordId(DSLContext tx, TransferRequest request, String transferId) {
        int inserted = tx.insertInto(ACCOUNT_TRANSFERS)
                .set(ACCOUNT_TRANSFERS.TRANSFER_ID, transferId)
                .set(ACCOUNT_TRANSFERS.FROM_ACCOUNT, request.from())
                .set(ACCOUNT_TRANSFERS.TO_ACCOUNT, request.to())
                .set(ACCOUNT_TRANSFERS.AMOUNT, request.amount())
                .onConflictDoNothing()
                .execute();
        if (inserted == 1) {
            return true;
        }
        AccountTransfersRecord first = tx.selectFrom(ACCOUNT_TRANSFERS)
                .where(ACCOUNT_TRANSFERS.TRANSFER_ID.eq(transferId))
                .fetchOptional()
                .orElseThrow(() -> new IllegalStateException(
                        "transfer " + transferId + " was recorded and removed " + "concurrently; retry"));
        if (first.getFromAccount() != request.from()
                || first.getToAccount() != request.to()
                || first.getAmount().compareTo(request.amount()) != 0) {
            throw new IllegalArgumentException("transferId " + transferId + " was already used for a different "
                    + "transfer: " + first.getAmount().toPlainString() + " from account " + first.getFromAccount()
                    + " to account " + first.getToAccount());
        }
        return false;
    }

    static TransferResult.Status once(
            AccountStatements sql, DSLContext tx, TransferStrategy strategy, long from, long to, BigDecimal amount) {
        switch (strategy) {
            case ATOMIC_GUARD:
                return atomicGuard(sql, tx, from, to, amount);
            case PESSIMISTIC:
                return readDecideWrite(sql, tx, both(sql, true, tx, from, to), from, to, amount);
            case SERIALIZABLE:
                return readDecideWrite(sql, tx, both(sql, false, tx, from, to), from, to, amount);
            case OPTIMISTIC:
                return optimistic(sql, tx, from, to, amount);
            default:
                throw new IllegalArgumentException("unknown strategy " + strategy);
        }
    }

    /**
     * Guarded debit then credit. Rows are locked in ascending id order: when the credited
     * account has the lower id, its row is locked first, so transfers in opposite directions
     * cannot deadlock.
     */
    private static TransferResult.Status atomicGuard(
            AccountStatements sql, DSLContext tx, long from, long to, BigDecimal amount) {
        if (to < from
                && sql.lockOne
                        .fetch(tx, sql.lockOne.binds().set(AccountStatements.ID, to), row -> 1)
                        .isEmpty()) {
            throw new AccountNotFoundException(to);
        }
        if (!debit(sql, tx, from, amount)) {
            if (!Accounts.exists(tx, from)) {
                throw new AccountNotFoundException(from);
            }
            return TransferResult.Status.INSUFFICIENT_FUNDS;
        }
        if (!credit(sql, tx, to, amount)) {
            // The debit is undone by the caller's rollback (own transaction or savepoint).
            throw new AccountNotFoundException(to);
        }
        return TransferResult.Status.TRANSFERRED;
    }

    static boolean debit(AccountStatements sql, DSLContext tx, long id, BigDecimal amount) {
        return sql.debit
                .fetchOptional(
                        tx,
                        sql.debit.binds().set(AccountStatements.ID, id).set(AccountStatements.AMOUNT, amount),
                        row -> {
                            sql.reportIdentity(row);
                            return Boolean.TRUE;
                        })
                .isPresent();
    }

    static boolean credit(AccountStatements sql, DSLContext tx, long id, BigDecimal amount) {
        return sql.credit.execute(
                        tx, sql.credit.binds().set(AccountStatements.ID, id).set(AccountStatements.AMOUNT, amount))
                == 1;
    }

    static boolean compareAndSwap(
            AccountStatements sql, DSLContext tx, long id, long expectedVersion, BigDecimal balance) {
        return sql.compareAndSwap.execute(
                        tx,
                        sql.compareAndSwap
                                .binds()
                                .set(AccountStatements.ID, id)
                                .set(AccountStatements.VERSION, expectedVersion)
                                .set(AccountStatements.BALANCE, balance))
                == 1;
    }

    /**
     * Both accounts in ascending id order, locked or not: in one statement on one server, and one
     * router statement per account on Citus (where a lock on rows of two shards is refused).
     */
    private static List<Account> both(AccountStatements sql, boolean lock, DSLContext tx, long from, long to) {
        if (sql.distributed) {
            RenderedQuery one = lock ? sql.lockAccount : sql.readOne;
            List<Account> rows = new ArrayList<>(2);
            for (long id : new long[] {Math.min(from, to), Math.max(from, to)}) {
                rows.addAll(one.fetch(tx, one.binds().set(AccountStatements.ID, id), sql::account));
            }
            return rows;
        }
        RenderedQuery statement = lock ? sql.lockTwo : sql.readTwo;
        return statement.fetch(
                tx,
                statement.binds().set(AccountStatements.ID, from).set(AccountStatements.OTHER_ID, to),
                sql::account);
    }

    /**
     * Decides in Java from the rows read and writes computed balances, in ascending id order.
     * Correct only when the rows cannot change in between: locked (PESSIMISTIC) or under
     * SERIALIZABLE, where PostgreSQL aborts one of two conflicting transactions.
     */
    private static TransferResult.Status readDecideWrite(
            AccountStatements sql, DSLContext tx, List<Account> rows, long from, long to, BigDecimal amount) {
        Account source = find(rows, from);
        find(rows, to);
        if (source.balance().compareTo(amount) < 0) {
            return TransferResult.Status.INSUFFICIENT_FUNDS;
        }
        for (Account row : rows) {
            sql.setBalance.execute(
                    tx,
                    sql.setBalance
                            .binds()
                            .set(AccountStatements.ID, row.id())
                            .set(AccountStatements.BALANCE, after(row, source, amount)));
        }
        return TransferResult.Status.TRANSFERRED;
    }

    /**
     * Reads both rows without locks, then compare-and-swaps each on its version in ascending id
     * order. Throws {@link VersionConflict} when either swap loses; the caller rolls back.
     */
    static TransferResult.Status optimistic(
            AccountStatements sql, DSLContext tx, long from, long to, BigDecimal amount) {
        List<Account> rows = both(sql, false, tx, from, to);
        Account source = find(rows, from);
        find(rows, to);
        if (source.balance().compareTo(amount) < 0) {
            return TransferResult.Status.INSUFFICIENT_FUNDS;
        }
        for (Account row : rows) {
            if (!compareAndSwap(sql, tx, row.id(), row.version(), after(row, source, amount))) {
                throw new VersionConflict(row.id());
            }
        }
        return TransferResult.Status.TRANSFERRED;
    }

    /** The balance {@code row} has after the transfer: debited if it is the source, else credited. */
    @SuppressWarnings("ReferenceEquality") // identity on purpose: source is one of the rows read
    private static BigDecimal after(Account row, Account source, BigDecimal amount) {
        return row == source ? row.balance().subtract(amount) : row.balance().add(amount);
    }

    private static Account find(List<Account> rows, long id) {
        for (Account row : rows) {
            if (row.id() == id) {
                return row;
            }
        }
        throw new AccountNotFoundException(id);
    }
}

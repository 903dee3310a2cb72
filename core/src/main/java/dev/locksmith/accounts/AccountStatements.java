package dev.locksmith.accounts;

import static dev.locksmith.codegen.Tables.ACCOUNTS;

import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.internal.TransactionIdentity;
import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Param;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The statements of transfers, guarded updates and compare-and-swap, written in the DSL and
 * rendered once per {@link Accounts} (see {@link RenderedQuery} for why). Every one returns rows
 * (the changed ids where only a count is wanted): see {@link RenderedQuery#execute}.
 *
 * <p>Two sets: one server's, and Citus's ({@link #distributed}), where the accounts table is
 * distributed by id. There every statement names one id, so that it is a single-shard (router)
 * statement: two accounts are read or locked one after the other, in ascending id order, and
 * no statement carries the transaction's identity ({@link TransactionIdentity}), since a router
 * statement runs on a worker and would return the worker's transaction id and backend, not the
 * coordinator's (and Citus refuses non-immutable functions in {@code RETURNING}).
 */
final class AccountStatements {

    static final String ID = "id";
    static final String OTHER_ID = "other_id";
    static final String AMOUNT = "amount";
    static final String BALANCE = "balance";
    static final String VERSION = "version";

    /** Citus's set: router statements only, no transaction identity. */
    final boolean distributed;
    /** {@code SELECT id ... FOR NO KEY UPDATE} of one account. */
    final RenderedQuery lockOne;
    /** Both accounts, in ascending id order, unlocked (one server). */
    final RenderedQuery readTwo;
    /** Both accounts, locked in ascending id order (one server). */
    final RenderedQuery lockTwo;
    /** One account, unlocked (Citus: {@link #readTwo} is two of these). */
    final RenderedQuery readOne;
    /** One account, locked (Citus: {@link #lockTwo} is two of these, in ascending id order). */
    final RenderedQuery lockAccount;
    /** {@code balance = balance - :amount WHERE id = :id AND balance >= :amount RETURNING <identity>}. */
    final RenderedQuery debit;
    /** {@code balance = balance + :amount WHERE id = :id RETURNING id}. */
    final RenderedQuery credit;
    /** {@code balance = :balance WHERE id = :id RETURNING id} (the row is already locked or SERIALIZABLE guards it). */
    final RenderedQuery setBalance;
    /** {@code balance = :balance WHERE id = :id AND version = :version RETURNING id}. */
    final RenderedQuery compareAndSwap;

    AccountStatements(DSLContext dsl, boolean distributed) {
        this.distributed = distributed;
        Param<Long> id = DSL.param(ID, SQLDataType.BIGINT);
        Param<Long> otherId = DSL.param(OTHER_ID, SQLDataType.BIGINT);
        Param<BigDecimal> amount = DSL.param(AMOUNT, SQLDataType.NUMERIC);
        Param<BigDecimal> balance = DSL.param(BALANCE, SQLDataType.NUMERIC);
        Field<Long> nextVersion = ACCOUNTS.VERSION.plus(DSL.inline(1L));
        // the transaction's identity rides along on the first statement of each transfer, which saves
        // Transactions the round trip that would otherwise fetch it before COMMIT
        List<Field<?>> columns = distributed
                ? List.of(ACCOUNTS.ID, ACCOUNTS.BALANCE, ACCOUNTS.VERSION, ACCOUNTS.UPDATED_AT)
                : List.of(
                        ACCOUNTS.ID,
                        ACCOUNTS.BALANCE,
                        ACCOUNTS.VERSION,
                        ACCOUNTS.UPDATED_AT,
                        TransactionIdentity.XID,
                        TransactionIdentity.PID);

        lockOne = RenderedQuery.of(
                dsl,
                dsl.select(ACCOUNTS.ID).from(ACCOUNTS).where(ACCOUNTS.ID.eq(id)).forNoKeyUpdate());
        readTwo = RenderedQuery.of(
                dsl,
                dsl.select(columns)
                        .from(ACCOUNTS)
                        .where(ACCOUNTS.ID.in(id, otherId))
                        .orderBy(ACCOUNTS.ID));
        lockTwo = RenderedQuery.of(
                dsl,
                dsl.select(columns)
                        .from(ACCOUNTS)
                        .where(ACCOUNTS.ID.in(id, otherId))
                        .orderBy(ACCOUNTS.ID)
                        .forNoKeyUpdate());
        readOne = RenderedQuery.of(dsl, dsl.select(columns).from(ACCOUNTS).where(ACCOUNTS.ID.eq(id)));
        lockAccount = RenderedQuery.of(
                dsl,
                dsl.select(columns).from(ACCOUNTS).where(ACCOUNTS.ID.eq(id)).forNoKeyUpdate());
        debit = RenderedQuery.of(
                dsl,
                dsl.update(ACCOUNTS)
                        .set(ACCOUNTS.BALANCE, ACCOUNTS.BALANCE.minus(amount))
                        .set(ACCOUNTS.VERSION, nextVersion)
                        .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(ACCOUNTS.ID.eq(id).and(ACCOUNTS.BALANCE.ge(amount)))
                        .returning(
                                distributed
                                        ? List.of(ACCOUNTS.ID)
                                        : List.of(TransactionIdentity.XID, TransactionIdentity.PID)));
        credit = RenderedQuery.of(
                dsl,
                dsl.update(ACCOUNTS)
                        .set(ACCOUNTS.BALANCE, ACCOUNTS.BALANCE.plus(amount))
                        .set(ACCOUNTS.VERSION, nextVersion)
                        .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(ACCOUNTS.ID.eq(id))
                        .returning(ACCOUNTS.ID));
        setBalance = RenderedQuery.of(
                dsl,
                dsl.update(ACCOUNTS)
                        .set(ACCOUNTS.BALANCE, balance)
                        .set(ACCOUNTS.VERSION, nextVersion)
                        .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(ACCOUNTS.ID.eq(id))
                        .returning(ACCOUNTS.ID));
        compareAndSwap = RenderedQuery.of(
                dsl,
                dsl.update(ACCOUNTS)
                        .set(ACCOUNTS.BALANCE, balance)
                        .set(ACCOUNTS.VERSION, nextVersion)
                        .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(ACCOUNTS.ID.eq(id).and(ACCOUNTS.VERSION.eq(DSL.param(VERSION, SQLDataType.BIGINT))))
                        .returning(ACCOUNTS.ID));
    }

    /** Reports the transaction's identity from a row of this set's statements that carry it (none on Citus). */
    void reportIdentity(ResultSet row) throws SQLException {
        if (!distributed) {
            TransactionIdentity.report(row);
        }
    }

    /** Maps a row of {@link #readTwo} / {@link #lockTwo}, reporting the transaction's identity where it has it. */
    Account account(ResultSet row) throws SQLException {
        reportIdentity(row);
        return new Account(
                row.getLong(ACCOUNTS.ID.getName()),
                row.getBigDecimal(ACCOUNTS.BALANCE.getName()),
                row.getLong(ACCOUNTS.VERSION.getName()),
                row.getObject(ACCOUNTS.UPDATED_AT.getName(), OffsetDateTime.class));
    }
}

package dev.locksmith.accounts;

import static dev.locksmith.codegen.Tables.ACCOUNTS;

import dev.locksmith.internal.RenderedQuery;
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
 * rendered once per {@link Accounts} (see {@link RenderedQuery} for why).
 */
final class AccountStatements {

    static final String ID = "id";
    static final String OTHER_ID = "other_id";
    static final String AMOUNT = "amount";
    static final String BALANCE = "balance";
    static final String VERSION = "version";

    /** {@code SELECT id ... FOR NO KEY UPDATE} of one account. */
    final RenderedQuery lockOne;
    /** Both accounts, in ascending id order, unlocked. */
    final RenderedQuery readTwo;
    /** Both accounts, locked in ascending id order. */
    final RenderedQuery lockTwo;
    /** {@code balance = balance - :amount WHERE id = :id AND balance >= :amount}. */
    final RenderedQuery debit;
    /** {@code balance = balance + :amount WHERE id = :id}. */
    final RenderedQuery credit;
    /** {@code balance = :balance WHERE id = :id} (the row is already locked or SERIALIZABLE guards it). */
    final RenderedQuery setBalance;
    /** {@code balance = :balance WHERE id = :id AND version = :version}. */
    final RenderedQuery compareAndSwap;

    AccountStatements(DSLContext dsl) {
        Param<Long> id = DSL.param(ID, SQLDataType.BIGINT);
        Param<Long> otherId = DSL.param(OTHER_ID, SQLDataType.BIGINT);
        Param<BigDecimal> amount = DSL.param(AMOUNT, SQLDataType.NUMERIC);
        Param<BigDecimal> balance = DSL.param(BALANCE, SQLDataType.NUMERIC);
        Field<Long> nextVersion = ACCOUNTS.VERSION.plus(DSL.inline(1L));
        List<Field<?>> columns = List.of(ACCOUNTS.ID, ACCOUNTS.BALANCE, ACCOUNTS.VERSION, ACCOUNTS.UPDATED_AT);

        lockOne = RenderedQuery.of(dsl, dsl.select(ACCOUNTS.ID).from(ACCOUNTS).where(ACCOUNTS.ID.eq(id)).forNoKeyUpdate());
        readTwo = RenderedQuery.of(dsl, dsl.select(columns).from(ACCOUNTS)
                .where(ACCOUNTS.ID.in(id, otherId)).orderBy(ACCOUNTS.ID));
        lockTwo = RenderedQuery.of(dsl, dsl.select(columns).from(ACCOUNTS)
                .where(ACCOUNTS.ID.in(id, otherId)).orderBy(ACCOUNTS.ID).forNoKeyUpdate());
        debit = RenderedQuery.of(dsl, dsl.update(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, ACCOUNTS.BALANCE.minus(amount))
                .set(ACCOUNTS.VERSION, nextVersion)
                .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                .where(ACCOUNTS.ID.eq(id).and(ACCOUNTS.BALANCE.ge(amount))));
        credit = RenderedQuery.of(dsl, dsl.update(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, ACCOUNTS.BALANCE.plus(amount))
                .set(ACCOUNTS.VERSION, nextVersion)
                .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                .where(ACCOUNTS.ID.eq(id)));
        setBalance = RenderedQuery.of(dsl, dsl.update(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, balance)
                .set(ACCOUNTS.VERSION, nextVersion)
                .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                .where(ACCOUNTS.ID.eq(id)));
        compareAndSwap = RenderedQuery.of(dsl, dsl.update(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, balance)
                .set(ACCOUNTS.VERSION, nextVersion)
                .set(ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                .where(ACCOUNTS.ID.eq(id).and(ACCOUNTS.VERSION.eq(DSL.param(VERSION, SQLDataType.BIGINT)))));
    }

    /** Maps a row of {@link #readTwo} / {@link #lockTwo}. */
    static Account account(ResultSet row) throws SQLException {
        return new Account(row.getLong(ACCOUNTS.ID.getName()), row.getBigDecimal(ACCOUNTS.BALANCE.getName()),
                row.getLong(ACCOUNTS.VERSION.getName()), row.getObject(ACCOUNTS.UPDATED_AT.getName(), OffsetDateTime.class));
    }
}

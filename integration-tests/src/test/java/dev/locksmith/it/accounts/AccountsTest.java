package dev.locksmith.it.accounts;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.RetryPolicy;
import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.AccountNotFoundException;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferResult;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.it.support.DatabaseTest;
import java.math.BigDecimal;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Single-threaded behaviour and bad input; every rejected call is checked to have written nothing. */
class AccountsTest extends DatabaseTest {

    private Accounts accounts;

    @BeforeEach
    void cleanTable() {
        dsl.deleteFrom(ACCOUNTS).execute();
        accounts = new Accounts(dsl, RetryPolicy.defaults());
    }

    private static BigDecimal money(String value) {
        return new BigDecimal(value);
    }

    /** Every row as it is now: the "nothing was written" witness. */
    private List<String> snapshot() {
        return dsl.select(ACCOUNTS.ID, ACCOUNTS.BALANCE, ACCOUNTS.VERSION)
                .from(ACCOUNTS)
                .orderBy(ACCOUNTS.ID)
                .fetch()
                .map(r -> r.value1() + ":" + r.value2().toPlainString() + ":" + r.value3());
    }

    @Test
    void opensAndFindsAtScaleTwo() {
        Account opened = accounts.open(money("12.5"));
        assertThat(opened.balance()).isEqualTo(money("12.50"));
        assertThat(opened.version()).isZero();
        assertThat(accounts.find(dsl, opened.id())).contains(opened);
        assertThat(accounts.find(dsl, opened.id() + 1000)).isEmpty();
        assertThat(accounts.openAll(dsl, List.of(money("1"), money("2.25"))))
                .extracting(Account::balance)
                .containsExactly(money("1.00"), money("2.25"));
    }

    @Test
    void rejectsBadOpeningBalancesAndWritesNothing() {
        assertThatThrownBy(() -> accounts.open(money("-0.01")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be negative");
        assertThatThrownBy(() -> accounts.open(money("1.005")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("never rounds");
        assertThatThrownBy(() -> accounts.open(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("openingBalance");
        assertThatThrownBy(() -> accounts.openAll(dsl, List.of(money("1"), money("-1"))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(dsl.fetchCount(ACCOUNTS)).isZero();
    }

    @Test
    void guardedDebitNeverOverdrawsAndCreditAdds() {
        long id = accounts.open(money("10")).id();
        assertThat(accounts.debit(dsl, id, money("4"))).isTrue();
        assertThat(accounts.debit(dsl, id, money("6.01"))).isFalse();
        assertThat(accounts.credit(dsl, id, money("0.01"))).isTrue();
        Account now = accounts.get(dsl, id);
        assertThat(now.balance()).isEqualTo(money("6.01"));
        assertThat(now.version()).isEqualTo(2);
        assertThatThrownBy(() -> accounts.debit(dsl, id + 99, money("1"))).isInstanceOf(AccountNotFoundException.class);
        assertThatThrownBy(() -> accounts.credit(dsl, id + 99, money("1")))
                .isInstanceOf(AccountNotFoundException.class);
        assertThatThrownBy(() -> accounts.debit(dsl, id, money("0"))).isInstanceOf(IllegalArgumentException.class);
        assertThat(accounts.get(dsl, id)).isEqualTo(now);
    }

    @Test
    void compareAndSwapAppliesOnlyOnTheExpectedVersion() {
        Account a = accounts.open(money("10"));
        assertThat(accounts.updateIfVersion(dsl, a.id(), a.version(), money("7")))
                .isTrue();
        assertThat(accounts.updateIfVersion(dsl, a.id(), a.version(), money("99")))
                .isFalse();
        assertThat(accounts.get(dsl, a.id()).balance()).isEqualTo(money("7.00"));
        assertThatThrownBy(() -> accounts.updateIfVersion(dsl, a.id(), 1, money("-1")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> accounts.updateIfVersion(dsl, a.id() + 5, 0, money("1")))
                .isInstanceOf(AccountNotFoundException.class);
    }

    @Test
    void lockingAnUnknownAccountIsAClearError() {
        long id = accounts.open(money("1")).id();
        dsl.transaction(c -> {
            assertThatThrownBy(() -> accounts.lockForUpdate(c.dsl(), id + 7, LockWait.forever()))
                    .isInstanceOf(AccountNotFoundException.class);
            assertThatThrownBy(() -> accounts.lockForUpdate(c.dsl(), List.of(id, id + 7), LockWait.skipLocked()))
                    .isInstanceOfSatisfying(
                            AccountNotFoundException.class,
                            e -> assertThat(e.accountId()).isEqualTo(id + 7));
            assertThat(accounts.lockForUpdate(c.dsl(), List.of(id), LockWait.noWait()))
                    .hasSize(1);
        });
    }

    @ParameterizedTest
    @EnumSource(TransferStrategy.class)
    void transfersAndReportsInsufficientFundsAsAValue(TransferStrategy strategy) {
        long a = accounts.open(money("10")).id();
        long b = accounts.open(money("0")).id();

        assertThat(accounts.transfer(a, b, money("3.50"), strategy))
                .isEqualTo(new TransferResult(TransferResult.Status.TRANSFERRED, 1));
        List<String> after = snapshot();
        assertThat(accounts.transfer(a, b, money("6.51"), strategy).status())
                .isEqualTo(TransferResult.Status.INSUFFICIENT_FUNDS);
        assertThat(snapshot()).isEqualTo(after);
        // the other direction too (the credited account has the lower id)
        assertThat(accounts.transfer(b, a, money("3.50"), strategy).transferred())
                .isTrue();
        assertThat(accounts.get(dsl, a).balance()).isEqualTo(money("10.00"));
        assertThat(accounts.get(dsl, b).balance()).isEqualTo(money("0.00"));
    }

    @ParameterizedTest
    @EnumSource(TransferStrategy.class)
    void rejectsBadTransfersAndWritesNothing(TransferStrategy strategy) {
        long a = accounts.open(money("10")).id();
        long b = accounts.open(money("10")).id();
        List<String> before = snapshot();

        assertThatThrownBy(() -> accounts.transfer(a, a, money("1"), strategy))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("itself");
        assertThatThrownBy(() -> accounts.transfer(a, b, money("0"), strategy))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> accounts.transfer(a, b, money("-5"), strategy))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> accounts.transfer(a, b, money("0.001"), strategy))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> accounts.transfer(a, b, null, strategy)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> accounts.transfer(a, b + 100, money("1"), strategy))
                .isInstanceOf(AccountNotFoundException.class);
        assertThatThrownBy(() -> accounts.transfer(b + 100, a, money("1"), strategy))
                .isInstanceOf(AccountNotFoundException.class);
        assertThatThrownBy(() -> accounts.transfer(a, b, money("1"), null)).isInstanceOf(NullPointerException.class);

        assertThat(snapshot()).isEqualTo(before);
    }

    @ParameterizedTest
    @EnumSource(value = TransferStrategy.class, names = "SERIALIZABLE", mode = EnumSource.Mode.EXCLUDE)
    void inTransactionVariantCommitsAndRollsBackWithTheCaller(TransferStrategy strategy) {
        long a = accounts.open(money("10")).id();
        long b = accounts.open(money("10")).id();
        List<String> before = snapshot();

        assertThatThrownBy(() -> dsl.transaction(c -> {
                    assertThat(accounts.transfer(c.dsl(), a, b, money("4"), strategy)
                                    .transferred())
                            .isTrue();
                    throw new IllegalStateException("caller fails after the transfer");
                }))
                .isInstanceOf(IllegalStateException.class);
        assertThat(snapshot()).isEqualTo(before);

        dsl.transaction(c -> {
            // a failed transfer inside the caller's transaction leaves nothing, and the caller goes on
            assertThatThrownBy(() -> accounts.transfer(c.dsl(), a, b + 100, money("4"), strategy))
                    .isInstanceOf(AccountNotFoundException.class);
            accounts.transfer(c.dsl(), a, b, money("4"), strategy);
        });
        assertThat(accounts.get(dsl, a).balance()).isEqualTo(money("6.00"));
        assertThat(accounts.get(dsl, b).balance()).isEqualTo(money("14.00"));
    }

    @Test
    void inTransactionVariantRefusesAutoCommitAndNonSerializableCallers() {
        long a = accounts.open(money("10")).id();
        long b = accounts.open(money("10")).id();
        assertThatThrownBy(() -> accounts.transfer(dsl, a, b, money("1"), TransferStrategy.PESSIMISTIC))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("open transaction");
        assertThatThrownBy(() -> dsl.transaction(
                        c -> accounts.transfer(c.dsl(), a, b, money("1"), TransferStrategy.SERIALIZABLE)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("SERIALIZABLE");
        dsl.transaction(c -> {
            c.dsl().execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
            assertThat(accounts.transfer(c.dsl(), a, b, money("1"), TransferStrategy.SERIALIZABLE)
                            .transferred())
                    .isTrue();
        });
        assertThat(accounts.get(dsl, b).balance()).isEqualTo(money("11.00"));
    }
}

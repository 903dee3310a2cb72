package dev.locksmith.it.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.RetryPolicy;
import dev.locksmith.Transactions;
import dev.locksmith.accounts.AccountNotFoundException;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferRequest;
import dev.locksmith.accounts.TransferResult;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.HeldTransaction;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Transfers by strategy and outcome, row lock waits, a lock timeout and a retried deadlock, counted exactly. */
class MetricsAccountsTest extends MetricsDatabaseTest {

    private static final BigDecimal TEN = new BigDecimal("10.00");

    private Accounts accounts;
    private long a;
    private long b;

    @BeforeEach
    void twoAccounts() {
        accounts = new Accounts(observed);
        a = accounts.open(new BigDecimal("100.00")).id();
        b = accounts.open(new BigDecimal("0.00")).id();
    }

    private long transfers(String strategy, String outcome) {
        return timed("locksmith.transfers", "strategy", strategy, "outcome", outcome);
    }

    @Test
    void transfersAreTimedByStrategyAndOutcome() {
        for (TransferStrategy strategy : TransferStrategy.values()) {
            assertThat(accounts.transfer(a, b, TEN, strategy).status()).isEqualTo(TransferResult.Status.TRANSFERRED);
        }
        BigDecimal tooMuch = new BigDecimal("1000.00");
        assertThat(accounts.transfer(a, b, tooMuch, TransferStrategy.PESSIMISTIC)
                        .status())
                .isEqualTo(TransferResult.Status.INSUFFICIENT_FUNDS);
        assertThat(accounts.transfer(a, b, tooMuch, TransferStrategy.ATOMIC_GUARD)
                        .status())
                .isEqualTo(TransferResult.Status.INSUFFICIENT_FUNDS);
        TransferRequest pay =
                TransferRequest.of(a, b, TEN, TransferStrategy.ATOMIC_GUARD).withTransferId("order-4711");
        assertThat(accounts.transfer(pay).status()).isEqualTo(TransferResult.Status.TRANSFERRED);
        assertThat(accounts.transfer(pay).status()).isEqualTo(TransferResult.Status.ALREADY_TRANSFERRED);
        TransferResult inCallersTransaction =
                observed.transactionResult(c -> accounts.transfer(c.dsl(), a, b, TEN, TransferStrategy.PESSIMISTIC));
        assertThat(inCallersTransaction.transferred()).isTrue();
        assertThatThrownBy(() -> accounts.transfer(a, Long.MAX_VALUE, TEN, TransferStrategy.PESSIMISTIC))
                .isInstanceOf(AccountNotFoundException.class);

        assertThat(transfers("pessimistic", "ok")).isEqualTo(2);
        assertThat(transfers("pessimistic", "insufficient_funds")).isEqualTo(1);
        assertThat(transfers("pessimistic", "error")).isEqualTo(1);
        assertThat(transfers("atomic_guard", "ok")).isEqualTo(2);
        assertThat(transfers("atomic_guard", "insufficient_funds")).isEqualTo(1);
        assertThat(transfers("atomic_guard", "already_transferred")).isEqualTo(1);
        assertThat(transfers("optimistic", "ok")).isEqualTo(1);
        assertThat(transfers("serializable", "ok")).isEqualTo(1);
        assertThat(timed("locksmith.transfers")).isEqualTo(10);
        // uncontended: nothing was retried, no lock failed
        assertThat(counted("locksmith.retries")).isZero();
        assertThat(counted("locksmith.locks.deadlocks")).isZero();
        assertThat(counted("locksmith.locks.timeouts")).isZero();
    }

    @Test
    void aBoundedWaitThatRunsOutIsOneLockTimeoutAndOneTimedOutWait() throws Exception {
        Accounts unobserved = new Accounts(dsl);
        try (HeldTransaction holder =
                HeldTransaction.start(dsl, tx -> unobserved.lockForUpdate(tx, a, LockWait.forever()))) {
            assertThatThrownBy(() -> observed.transaction(
                            c -> accounts.lockForUpdate(c.dsl(), a, LockWait.upTo(Duration.ofMillis(100)))))
                    .isInstanceOf(LockNotAvailableException.class);
            holder.commit();
        }
        observed.transaction(c -> accounts.lockForUpdate(c.dsl(), a, LockWait.upTo(Duration.ofMillis(100))));

        assertThat(counted("locksmith.locks.timeouts")).isEqualTo(1);
        assertThat(counted("locksmith.locks.deadlocks")).isZero();
        assertThat(timed("locksmith.locks.wait", "table", "accounts", "outcome", "timeout"))
                .isEqualTo(1);
        assertThat(timed("locksmith.locks.wait", "table", "accounts", "outcome", "ok"))
                .isEqualTo(1);
        assertThat(timed("locksmith.locks.wait")).isEqualTo(2);
        assertThat(counted("locksmith.retries")).isZero();
    }

    @Test
    void aDeadlockRetriedByTransactionsIsOneDeadlockAndOneRetryThoughTwoRepositoriesSawIt() throws Exception {
        Transactions transactions =
                new Transactions(observed, RetryPolicy.builder().maxAttempts(3).build());
        CyclicBarrier bothHoldFirst = new CyclicBarrier(2);
        // two transactions lock the two rows in opposite order: one is the victim, retried once
        List<Integer> attempts = Concurrently.run(2, 60, thread -> {
            AtomicInteger attempt = new AtomicInteger();
            transactions.run(c -> {
                c.dsl()
                        .select(DSL.field("set_config('deadlock_timeout', '100ms', true)"))
                        .fetch();
                accounts.lockForUpdate(c.dsl(), thread == 0 ? a : b, LockWait.forever());
                if (attempt.incrementAndGet() == 1) {
                    bothHoldFirst.await(30, TimeUnit.SECONDS);
                }
                accounts.lockForUpdate(c.dsl(), thread == 0 ? b : a, LockWait.forever());
                return null;
            });
            return attempt.get();
        });
        assertThat(attempts).containsExactlyInAnyOrder(1, 2);

        assertThat(counted("locksmith.locks.deadlocks")).isEqualTo(1);
        assertThat(counted("locksmith.locks.timeouts")).isZero();
        assertThat(counted("locksmith.retries", "reason", "deadlock")).isEqualTo(1);
        assertThat(counted("locksmith.retries")).isEqualTo(1);
        assertThat(timed("locksmith.locks.wait", "table", "accounts", "outcome", "deadlock"))
                .isEqualTo(1);
        // the survivor's two locks, the victim's first, and both of its second attempt
        assertThat(timed("locksmith.locks.wait", "table", "accounts", "outcome", "ok"))
                .isEqualTo(5);
        assertThat(timed("locksmith.locks.wait")).isEqualTo(6);
    }
}

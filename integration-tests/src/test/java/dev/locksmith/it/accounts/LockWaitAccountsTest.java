package dev.locksmith.it.accounts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * NOWAIT, bounded wait and SKIP LOCKED against a row another open transaction holds. The
 * holder is released only after the waiter has failed, so "failed while still held" proves
 * the waiter did not wait for the release.
 */
class LockWaitAccountsTest extends DatabaseTest {

    private Accounts accounts;
    private long id;
    private long other;

    @BeforeEach
    void accounts() {
        accounts = new Accounts(dsl);
        id = accounts.open(new BigDecimal("10.00")).id();
        other = accounts.open(new BigDecimal("10.00")).id();
    }

    private HeldTransaction holdRow() throws Exception {
        return HeldTransaction.start(dsl, tx -> accounts.lockForUpdate(tx, id, LockWait.forever()));
    }

    private Optional<Account> lock(LockWait wait) {
        return dsl.transactionResult(c -> accounts.lockForUpdate(c.dsl(), id, wait));
    }

    @Test
    void noWaitFailsWhileTheRowIsHeldAndSucceedsAfterCommit() throws Exception {
        try (HeldTransaction holder = holdRow()) {
            assertThatThrownBy(() -> lock(LockWait.noWait())).isInstanceOf(LockNotAvailableException.class);
            holder.commit();
        }
        assertThat(lock(LockWait.noWait())).map(Account::id).contains(id);
    }

    @Test
    void boundedWaitWaitsAboutTheBoundThenFails() throws Exception {
        Duration bound = Duration.ofMillis(300);
        long waitedNanos;
        try (HeldTransaction holder = holdRow()) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> lock(LockWait.upTo(bound))).isInstanceOf(LockNotAvailableException.class);
            waitedNanos = System.nanoTime() - start;
            holder.commit();
        }
        System.out.printf("bounded wait of %d ms gave up after %d ms%n", bound.toMillis(), waitedNanos / 1_000_000);
        // it really waited (a lower bound is correctness, not speed): lock_timeout was in force
        assertThat(Duration.ofNanos(waitedNanos))
                .isGreaterThanOrEqualTo(bound.multipliedBy(9).dividedBy(10));
        assertThat(lock(LockWait.upTo(bound))).isPresent();
    }

    @Test
    void skipLockedReturnsEmptyForAHeldRowAndSkipsItInASet() throws Exception {
        try (HeldTransaction holder = holdRow()) {
            assertThat(lock(LockWait.skipLocked())).isEmpty();
            List<Account> lockable = dsl.transactionResult(
                    c -> accounts.lockForUpdate(c.dsl(), List.of(other, id), LockWait.skipLocked()));
            assertThat(lockable).extracting(Account::id).containsExactly(other);
            holder.commit();
        }
        assertThat(lock(LockWait.skipLocked())).isPresent();
    }

    @Test
    void boundedWaitLeavesNoLockTimeoutOnThePooledConnection() {
        String serverDefault = dsl.fetchValue("SHOW lock_timeout").toString();
        for (int i = 0; i < 30; i++) { // more transactions than the pool has connections
            dsl.transaction(c -> accounts.lockForUpdate(c.dsl(), id, LockWait.upTo(Duration.ofMillis(123))));
        }
        for (int i = 0; i < poolSize(); i++) {
            assertThat(dsl.select(DSL.field("current_setting('lock_timeout')", String.class))
                            .fetchSingle()
                            .value1())
                    .isEqualTo(serverDefault);
        }
    }
}

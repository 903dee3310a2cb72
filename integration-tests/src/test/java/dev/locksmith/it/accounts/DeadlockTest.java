package dev.locksmith.it.accounts;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.LockWait;
import dev.locksmith.RetryPolicy;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.exception.DeadlockException;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import java.math.BigDecimal;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Opposite lock order deadlocks; locksmith's ordered strategies never do. */
class DeadlockTest extends DatabaseTest {

    static final int ITERATIONS = 300;

    private Accounts accounts;
    private long a;
    private long b;

    @BeforeEach
    void twoAccounts() {
        // no retries: a single deadlock would surface as an exception and fail the test
        accounts = new Accounts(dsl, RetryPolicy.noRetry());
        a = accounts.open(new BigDecimal("1000.00")).id();
        b = accounts.open(new BigDecimal("1000.00")).id();
    }

    @Test
    void lockingTwoRowsInOppositeOrderDeadlocks() throws Exception {
        CyclicBarrier bothHoldFirst = new CyclicBarrier(2);
        List<LocksmithException> outcomes = Concurrently.run(2, 60, thread -> {
            try {
                dsl.transaction(c -> {
                    c.dsl()
                            .select(DSL.field("set_config('deadlock_timeout', '100ms', true)"))
                            .fetch();
                    accounts.lockForUpdate(c.dsl(), thread == 0 ? a : b, LockWait.forever());
                    bothHoldFirst.await(30, TimeUnit.SECONDS);
                    accounts.lockForUpdate(c.dsl(), thread == 0 ? b : a, LockWait.forever());
                });
                return null;
            } catch (LocksmithException e) {
                return e;
            }
        });
        assertThat(outcomes).filteredOn(e -> e != null).singleElement().isInstanceOf(DeadlockException.class);
    }

    @ParameterizedTest
    @EnumSource(
            value = TransferStrategy.class,
            names = {"PESSIMISTIC", "ATOMIC_GUARD"})
    void orderedTransfersInBothDirectionsNeverDeadlock(TransferStrategy strategy) throws Exception {
        BigDecimal amount = new BigDecimal("1.00");
        CyclicBarrier together = new CyclicBarrier(4);
        List<Integer> applied = Concurrently.run(4, 120, thread -> {
            int done = 0;
            for (int i = 0; i < ITERATIONS; i++) {
                together.await(30, TimeUnit.SECONDS);
                boolean forward = thread % 2 == 0;
                if (accounts.transfer(forward ? a : b, forward ? b : a, amount, strategy)
                        .transferred()) {
                    done++;
                }
            }
            return done;
        });
        assertThat(applied).containsOnly(ITERATIONS);
        // two threads each way, equal amounts: both balances are back where they started
        assertThat(dsl.fetchValues(ACCOUNTS.BALANCE, ACCOUNTS.ID.in(a, b)))
                .allSatisfy(balance -> assertThat(balance).isEqualByComparingTo("1000.00"));
    }
}

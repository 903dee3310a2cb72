package dev.locksmith.it.accounts;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.LockWait;
import dev.locksmith.RetryPolicy;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The bug is real: read-modify-write in Java loses updates. Every variant runs the same
 * schedule: in each round all threads read, wait at a barrier, then write, so every round is
 * a worst-case interleaving by construction (deterministic, not luck). Only the way the write
 * is protected differs.
 */
class LostUpdateTest extends DatabaseTest {

    static final int THREADS = 8;
    static final int ROUNDS = 25;
    static final BigDecimal ONE = new BigDecimal("1.00");

    private Accounts accounts;
    private long id;

    @BeforeEach
    void freshAccount() {
        accounts = new Accounts(
                dsl,
                RetryPolicy.builder()
                        .maxAttempts(THREADS * 4)
                        .initialBackoff(Duration.ZERO)
                        .maxBackoff(Duration.ZERO)
                        .build());
        id = accounts.open(new BigDecimal("1000.00")).id();
    }

    private BigDecimal balance() {
        return dsl.fetchValue(ACCOUNTS.BALANCE, ACCOUNTS.ID.eq(id));
    }

    private BigDecimal expected() {
        return new BigDecimal("1000.00").add(ONE.multiply(BigDecimal.valueOf((long) THREADS * ROUNDS)));
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void naiveReadModifyWriteLosesUpdates() throws Exception {
        CyclicBarrier allRead = new CyclicBarrier(THREADS);
        Concurrently.run(THREADS, 120, thread -> {
            for (int round = 0; round < ROUNDS; round++) {
                BigDecimal read = balance(); // read
                await(allRead);
                dsl.update(ACCOUNTS)
                        .set(ACCOUNTS.BALANCE, read.add(ONE)) // write back what Java computed
                        .where(ACCOUNTS.ID.eq(id))
                        .execute();
                await(allRead);
            }
            return null;
        });

        BigDecimal lost = expected().subtract(balance());
        System.out.printf("naive read-modify-write: %d increments, %s lost%n", THREADS * ROUNDS, lost.toPlainString());
        assertThat(balance()).isLessThan(expected());
        assertThat(lost).isEqualByComparingTo(ONE.multiply(BigDecimal.valueOf((long) (THREADS - 1) * ROUNDS)));
    }

    @Test
    void guardedAtomicCreditLosesNothing() throws Exception {
        CyclicBarrier allReady = new CyclicBarrier(THREADS);
        Concurrently.run(THREADS, 120, thread -> {
            for (int round = 0; round < ROUNDS; round++) {
                await(allReady);
                accounts.credit(dsl, id, ONE);
            }
            return null;
        });
        assertThat(balance()).isEqualByComparingTo(expected());
    }

    @Test
    void pessimisticLockThenWriteLosesNothing() throws Exception {
        CyclicBarrier allReady = new CyclicBarrier(THREADS);
        Concurrently.run(THREADS, 120, thread -> {
            for (int round = 0; round < ROUNDS; round++) {
                await(allReady);
                dsl.transaction(c -> {
                    DSLContext tx = c.dsl();
                    BigDecimal read = accounts.lockForUpdate(tx, id, LockWait.forever())
                            .orElseThrow()
                            .balance();
                    tx.update(ACCOUNTS)
                            .set(ACCOUNTS.BALANCE, read.add(ONE))
                            .where(ACCOUNTS.ID.eq(id))
                            .execute();
                });
            }
            return null;
        });
        assertThat(balance()).isEqualByComparingTo(expected());
    }

    @Test
    void optimisticCompareAndSwapRetriesAndLosesNothing() throws Exception {
        AtomicInteger retries = new AtomicInteger();
        Accounts counting = new Accounts(
                dsl,
                RetryPolicy.builder()
                        .maxAttempts(THREADS * 4)
                        .initialBackoff(Duration.ZERO)
                        .maxBackoff(Duration.ZERO)
                        .listener((n, failure, pause) -> retries.incrementAndGet())
                        .build());
        CyclicBarrier allReady = new CyclicBarrier(THREADS);
        Concurrently.run(THREADS, 120, thread -> {
            for (int round = 0; round < ROUNDS; round++) {
                await(allReady);
                counting.updateOptimistically(id, balance -> balance.add(ONE));
            }
            return null;
        });
        System.out.printf(
                "optimistic read-modify-write: %d increments, %d compare-and-swap retries%n",
                THREADS * ROUNDS, retries.get());
        assertThat(balance()).isEqualByComparingTo(expected());
        assertThat(retries.get()).isPositive();
    }
}

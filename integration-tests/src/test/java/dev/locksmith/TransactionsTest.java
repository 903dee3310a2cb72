package dev.locksmith;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.exception.PgErrors;
import dev.locksmith.exception.SerializationFailureException;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import java.math.BigDecimal;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The retry helper re-runs whole transactions, and only for the failures its policy names. */
class TransactionsTest extends DatabaseTest {

    private final List<Duration> pauses = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void clearPauses() {
        pauses.clear();
    }

    private Transactions transactions(RetryPolicy policy, AtomicInteger retries) {
        return new Transactions(
                dsl,
                policy.toBuilder()
                        .listener((n, failure, pause) -> retries.incrementAndGet())
                        .build(),
                pauses::add);
    }

    @Test
    void retriesARealDeadlockUntilBothTransactionsCommit() throws Exception {
        long a = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, BigDecimal.TEN)
                .returning()
                .fetchSingle()
                .getId();
        long b = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, BigDecimal.TEN)
                .returning()
                .fetchSingle()
                .getId();
        AtomicInteger retries = new AtomicInteger();
        Transactions tx = transactions(RetryPolicy.defaults(), retries);
        CyclicBarrier firstRowsHeld = new CyclicBarrier(2);
        AtomicInteger attempts = new AtomicInteger();

        Concurrently.run(
                2,
                60,
                thread -> tx.run(c -> {
                    DSLContext ctx = c.dsl();
                    boolean firstAttempt = attempts.incrementAndGet() <= 2;
                    ctx.select(DSL.field("set_config('deadlock_timeout', '100ms', true)"))
                            .fetch();
                    long first = thread == 0 ? a : b;
                    long second = thread == 0 ? b : a;
                    ctx.update(ACCOUNTS)
                            .set(ACCOUNTS.VERSION, ACCOUNTS.VERSION.plus(1))
                            .where(ACCOUNTS.ID.eq(first))
                            .execute();
                    if (firstAttempt) {
                        firstRowsHeld.await(30, TimeUnit.SECONDS);
                    }
                    ctx.update(ACCOUNTS)
                            .set(ACCOUNTS.VERSION, ACCOUNTS.VERSION.plus(1))
                            .where(ACCOUNTS.ID.eq(second))
                            .execute();
                    return null;
                }));

        // At least the forced deadlock was retried. Under load the retried victim can meet the
        // survivor once more before it commits; the policy retries that too, so the exact count
        // is the scheduler's business, not the contract.
        assertThat(retries.get()).isPositive();
        assertThat(pauses).hasSize(retries.get());
        // both transactions committed in full: each row was bumped by both
        assertThat(dsl.fetchValues(ACCOUNTS.VERSION, ACCOUNTS.ID.in(a, b))).containsOnly(2L);
    }

    @Test
    void givesUpAfterMaxAttemptsWithTheLastFailure() {
        AtomicInteger retries = new AtomicInteger();
        AtomicInteger runs = new AtomicInteger();
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).jitter(0).build();

        assertThatThrownBy(() -> transactions(policy, retries).run(c -> {
                    runs.incrementAndGet();
                    throw new DataAccessException("simulated", new SQLException("could not serialize", "40001"));
                }))
                .isInstanceOf(SerializationFailureException.class);

        assertThat(runs).hasValue(3);
        assertThat(retries).hasValue(2);
        assertThat(pauses).containsExactly(Duration.ofMillis(10), Duration.ofMillis(20));
    }

    @Test
    void nonRetryableFailuresAndCallerExceptionsAreNotRetriedAndRollBack() {
        long id = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, BigDecimal.TEN)
                .returning()
                .fetchSingle()
                .getId();
        AtomicInteger runs = new AtomicInteger();
        Transactions tx = transactions(RetryPolicy.defaults(), new AtomicInteger());

        assertThatThrownBy(() -> tx.run(c -> {
                    runs.incrementAndGet();
                    c.dsl()
                            .update(ACCOUNTS)
                            .set(ACCOUNTS.BALANCE, BigDecimal.ZERO)
                            .where(ACCOUNTS.ID.eq(id))
                            .execute();
                    throw new IllegalStateException("caller's own failure");
                }))
                .isExactlyInstanceOf(IllegalStateException.class);

        assertThat(runs).hasValue(1);
        assertThat(dsl.fetchValue(ACCOUNTS.BALANCE, ACCOUNTS.ID.eq(id))).isEqualByComparingTo("10");
    }

    @Test
    void lockTimeoutIsRetriedOnlyWhenThePolicyAsks() throws Exception {
        long id = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, BigDecimal.TEN)
                .returning()
                .fetchSingle()
                .getId();
        LockWait wait = LockWait.noWait();
        AtomicInteger retries = new AtomicInteger();
        RetryPolicy policy = RetryPolicy.builder()
                .maxAttempts(2)
                .retryOn(RetryPolicy.Failure.LOCK_NOT_AVAILABLE)
                .build();
        try (HeldTransaction holder = HeldTransaction.start(
                dsl,
                t -> t.selectFrom(ACCOUNTS)
                        .where(ACCOUNTS.ID.eq(id))
                        .forUpdate()
                        .fetch())) {
            assertThatThrownBy(() -> transactions(policy, retries)
                            .run(c -> wait.run(
                                    c.dsl(),
                                    () -> wait.applyTo(c.dsl()
                                                    .selectFrom(ACCOUNTS)
                                                    .where(ACCOUNTS.ID.eq(id))
                                                    .forUpdate())
                                            .fetch())))
                    .isInstanceOf(dev.locksmith.exception.LockNotAvailableException.class);
        }
        assertThat(retries).hasValue(1);
        assertThat(RetryPolicy.defaults().isRetryable(PgErrors.translate(new java.sql.SQLException("d", "40P01"))))
                .isTrue();
    }
}

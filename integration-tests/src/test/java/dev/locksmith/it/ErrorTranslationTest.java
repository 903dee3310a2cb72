package dev.locksmith.it;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Isolation;
import dev.locksmith.LockWait;
import dev.locksmith.RetryPolicy;
import dev.locksmith.Transactions;
import dev.locksmith.exception.ConnectionTerminatedException;
import dev.locksmith.exception.DeadlockException;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.exception.SerializationFailureException;
import dev.locksmith.exception.StatementTimeoutException;
import dev.locksmith.exception.TransactionAbortedException;
import dev.locksmith.exception.TransientLocksmithException;
import dev.locksmith.exception.UniqueViolationException;
import dev.locksmith.internal.Errors;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import java.math.BigDecimal;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Each SQLState provoked for real, on real connections, arrives as its typed exception. */
class ErrorTranslationTest extends DatabaseTest {

    private long a;
    private long b;

    @BeforeEach
    void twoAccounts() {
        a = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, new BigDecimal("100.00"))
                .returning()
                .fetchSingle()
                .getId();
        b = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, new BigDecimal("100.00"))
                .returning()
                .fetchSingle()
                .getId();
    }

    private static void lockRow(DSLContext tx, long id) {
        tx.selectFrom(ACCOUNTS).where(ACCOUNTS.ID.eq(id)).forUpdate().fetchSingle();
    }

    /** Runs in a transaction and returns the translated failure, or null on success. */
    private LocksmithException failureOf(java.util.function.Consumer<DSLContext> work) {
        try {
            new Transactions(dsl, RetryPolicy.noRetry()).run(c -> {
                work.accept(c.dsl());
                return null;
            });
            return null;
        } catch (LocksmithException e) {
            return e;
        }
    }

    @Test
    void oppositeLockOrderDeadlocksAndOneSideGets40P01() throws Exception {
        CyclicBarrier bothHoldTheirFirstRow = new CyclicBarrier(2);
        List<LocksmithException> outcomes = Concurrently.run(
                2,
                60,
                thread -> failureOf(tx -> {
                    // A short deadlock_timeout makes the detector run sooner; superuser-only, transaction-scoped.
                    tx.select(DSL.field("set_config('deadlock_timeout', '100ms', true)"))
                            .fetch();
                    long first = thread == 0 ? a : b;
                    long second = thread == 0 ? b : a;
                    lockRow(tx, first);
                    await(bothHoldTheirFirstRow);
                    lockRow(tx, second);
                }));

        assertThat(outcomes)
                .filteredOn(e -> e != null)
                .singleElement()
                .isInstanceOfSatisfying(DeadlockException.class, e -> {
                    assertThat(e.sqlState()).isEqualTo("40P01");
                    assertThat(e.getCause()).isNotNull();
                    assertThat(e).isInstanceOf(TransientLocksmithException.class);
                });
        assertThat(outcomes).containsOnlyOnce((LocksmithException) null);
    }

    @Test
    void noWaitOnAHeldRowFailsWith55P03() throws Exception {
        try (HeldTransaction holder = HeldTransaction.start(dsl, tx -> lockRow(tx, a))) {
            LocksmithException failure = failureOf(tx -> LockWait.noWait()
                    .run(
                            tx,
                            () -> LockWait.noWait()
                                    .applyTo(tx.selectFrom(ACCOUNTS)
                                            .where(ACCOUNTS.ID.eq(a))
                                            .forUpdate())
                                    .fetch()));
            assertThat(failure).isInstanceOf(LockNotAvailableException.class);
            assertThat(failure.sqlState()).isEqualTo("55P03");
        }
    }

    @Test
    void expiringLockTimeoutFailsWith55P03() throws Exception {
        try (HeldTransaction holder = HeldTransaction.start(dsl, tx -> lockRow(tx, a))) {
            LockWait wait = LockWait.upTo(Duration.ofMillis(100));
            LocksmithException failure = failureOf(tx -> wait.run(
                    tx,
                    () -> wait.applyTo(tx.selectFrom(ACCOUNTS)
                                    .where(ACCOUNTS.ID.eq(a))
                                    .forUpdate())
                            .fetch()));
            assertThat(failure).isInstanceOf(LockNotAvailableException.class).hasMessageContaining("lock timeout");
        }
    }

    @Test
    void writeSkewUnderSerializableFailsWith40001() throws Exception {
        CyclicBarrier bothRead = new CyclicBarrier(2);
        List<LocksmithException> outcomes = Concurrently.run(2, 60, thread -> {
            try {
                new Transactions(dsl, RetryPolicy.noRetry()).run(Isolation.SERIALIZABLE, c -> {
                    DSLContext tx = c.dsl();
                    BigDecimal total = tx.select(DSL.sum(ACCOUNTS.BALANCE))
                            .from(ACCOUNTS)
                            .where(ACCOUNTS.ID.in(a, b))
                            .fetchSingle()
                            .value1();
                    await(bothRead);
                    // each withdraws the whole total from a different row: fine alone, not together
                    tx.update(ACCOUNTS)
                            .set(ACCOUNTS.BALANCE, ACCOUNTS.BALANCE.minus(total.subtract(new BigDecimal("100.00"))))
                            .where(ACCOUNTS.ID.eq(thread == 0 ? a : b))
                            .execute();
                    return null;
                });
                return null;
            } catch (LocksmithException e) {
                return e;
            }
        });
        assertThat(outcomes)
                .filteredOn(e -> e != null)
                .singleElement()
                .isInstanceOfSatisfying(
                        SerializationFailureException.class,
                        e -> assertThat(e.sqlState()).isEqualTo("40001"));
    }

    @Test
    void duplicateKeyFailsWith23505NamingTheIndex() {
        dsl.execute("INSERT INTO locksmith.job_unique_keys (queue, unique_key, job_id) VALUES ('q', 'dup', 1)");
        LocksmithException failure = failureOf(tx ->
                tx.execute("INSERT INTO locksmith.job_unique_keys (queue, unique_key, job_id) VALUES ('q', 'dup', 2)"));
        assertThat(failure)
                .isInstanceOfSatisfying(
                        UniqueViolationException.class,
                        e -> assertThat(e.constraint()).isEqualTo("job_unique_keys_pkey"));
    }

    @Test
    void statementTimeoutFailsWith57014() {
        LocksmithException failure = failureOf(tx -> {
            tx.select(DSL.field("set_config('statement_timeout', '50ms', true)"))
                    .fetch();
            tx.select(DSL.field("pg_sleep(5)")).fetch();
        });
        assertThat(failure).isInstanceOf(StatementTimeoutException.class);
        assertThat(failure.sqlState()).isEqualTo("57014");
    }

    @Test
    void statementAfterAnErrorInTheSameTransactionFailsWith25P02() {
        LocksmithException failure = failureOf(tx -> {
            try {
                tx.execute("SELECT 1 / 0");
            } catch (RuntimeException expected) {
                // swallowed on purpose: the transaction is now aborted
            }
            tx.selectOne().fetch();
        });
        assertThat(failure).isInstanceOf(TransactionAbortedException.class);
        assertThat(failure.sqlState()).isEqualTo("25P02");
    }

    @Test
    void terminatedBackendFailsWith57P01() throws Exception {
        try (Connection victim = pool.getConnection()) {
            DSLContext victimDsl = DSL.using(victim, SQLDialect.POSTGRES);
            int pid = victimDsl
                    .select(DSL.field("pg_backend_pid()", Integer.class))
                    .fetchSingle()
                    .value1();
            assertThat(dsl.select(DSL.field("pg_terminate_backend(?)", Boolean.class, pid))
                            .fetchSingle()
                            .value1())
                    .isTrue();
            assertThatThrownBy(
                            () -> Errors.translating(() -> victimDsl.selectOne().fetch()))
                    .isInstanceOfSatisfying(
                            ConnectionTerminatedException.class,
                            e -> assertThat(e.sqlState()).isIn("57P01", "08006", "08003"));
        }
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}

package dev.locksmith.it;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.advisory.AdvisoryKey;
import dev.locksmith.advisory.AdvisoryLocks;
import dev.locksmith.advisory.SessionLock;
import dev.locksmith.audit.LockAudit;
import dev.locksmith.audit.LockAuditConfig;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import java.math.BigDecimal;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every API that takes a {@link LockWait}, in both modes. Inside the caller's transaction a
 * bounded wait on a held lock fails with {@link LockNotAvailableException} while the lock is
 * still held. In auto-commit mode, where {@code set_config(..., true)} would vanish before the
 * locking statement ran, calls whose lock is meant to outlive the statement refuse with
 * {@link IllegalStateException} before sending anything; a session advisory lock, which runs
 * bound and lock in one statement on a connection of its own, keeps its bound. Auto-commit is
 * tried both through a pooled {@code DSLContext} and through one on a single connection.
 */
class BoundedWaitModesTest extends DatabaseTest {

    private static final LockWait BOUNDED = LockWait.upTo(Duration.ofMillis(100));
    private static final AdvisoryKey KEY = AdvisoryKey.of("modes", "k");

    private Accounts accounts;
    private LockAudit audit;
    private AdvisoryLocks locks;
    private long id;
    private Connection single;
    private DSLContext singleAutoCommit;

    @BeforeAll
    void setUp() throws Exception {
        accounts = new Accounts(dsl);
        audit = new LockAudit(dsl, LockAuditConfig.defaults());
        locks = new AdvisoryLocks(pool);
        id = accounts.open(BigDecimal.TEN).id();
        single = pool.getConnection();
        single.setAutoCommit(true);
        singleAutoCommit = DSL.using(single, SQLDialect.POSTGRES);
    }

    @AfterAll
    void tearDown() throws Exception {
        audit.close();
        single.close();
    }

    private Object lockRow(DSLContext tx, LockWait wait) {
        return wait.applyTo(tx.selectFrom(ACCOUNTS).where(ACCOUNTS.ID.eq(id)).forUpdate())
                .fetch();
    }

    /** The calls under test, each given the DSLContext to run on. */
    private List<Consumer<DSLContext>> rowLockCalls(LockWait wait) {
        return List.of(
                tx -> wait.run(tx, () -> lockRow(tx, wait)),
                tx -> accounts.lockForUpdate(tx, id, wait),
                tx -> accounts.lockForUpdate(tx, List.of(id), wait),
                tx -> audit.guard(tx, "accounts:" + id, wait, () -> lockRow(tx, wait)));
    }

    private List<Consumer<DSLContext>> advisoryCalls(LockWait wait) {
        return List.of(tx -> locks.lock(tx, KEY, wait), tx -> locks.lockShared(tx, KEY, wait));
    }

    @Test
    void insideATransactionEveryBoundedWaitFailsWhileTheRowIsStillHeld() throws Exception {
        try (HeldTransaction holder = HeldTransaction.start(dsl, tx -> lockRow(tx, LockWait.forever()))) {
            for (Consumer<DSLContext> call : rowLockCalls(BOUNDED)) {
                assertThatThrownBy(() -> dsl.transaction(c -> call.accept(c.dsl())))
                        .isInstanceOf(LockNotAvailableException.class);
            }
            holder.rollback();
        }
    }

    @Test
    void insideATransactionBoundedAdvisoryLocksFailWhileTheKeyIsStillHeld() {
        try (SessionLock held = locks.lockSession(KEY, LockWait.forever())) {
            for (Consumer<DSLContext> call : advisoryCalls(BOUNDED)) {
                assertThatThrownBy(() -> dsl.transaction(c -> call.accept(c.dsl())))
                        .isInstanceOf(LockNotAvailableException.class);
            }
            assertThatThrownBy(() -> locks.lockSession(KEY, BOUNDED)).isInstanceOf(LockNotAvailableException.class);
            assertThatThrownBy(() -> locks.lockSessionShared(KEY, BOUNDED))
                    .isInstanceOf(LockNotAvailableException.class);
        }
    }

    @Test
    void inAutoCommitModeABoundedWaitIsRefusedNotSilentlyUnbounded() {
        for (DSLContext autoCommit : List.of(dsl, singleAutoCommit)) {
            for (Consumer<DSLContext> call : rowLockCalls(BOUNDED)) {
                assertThatThrownBy(() -> call.accept(autoCommit))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("open transaction")
                        .hasMessageContaining("auto-commit");
            }
            for (Consumer<DSLContext> call : advisoryCalls(BOUNDED)) {
                assertThatThrownBy(() -> call.accept(autoCommit))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("auto-commit");
            }
        }
        assertThatThrownBy(() -> BOUNDED.run(dsl, () -> 1)).hasMessageContaining("LockWait.upTo(PT0.1S)");
    }

    @Test
    void inAutoCommitModeRowLocksAndGuardsAreRefusedForEveryKindOfWait() {
        for (LockWait wait : List.of(LockWait.forever(), LockWait.noWait(), LockWait.skipLocked())) {
            List<Consumer<DSLContext>> calls = rowLockCalls(wait);
            for (Consumer<DSLContext> call : calls.subList(1, calls.size())) { // all but LockWait.run itself
                assertThatThrownBy(() -> call.accept(singleAutoCommit))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("auto-commit");
            }
            // LockWait.run adds no setting for these kinds, so it runs the statement as it is
            assertThat(wait.run(singleAutoCommit, () -> lockRow(singleAutoCommit, wait)))
                    .isNotNull();
        }
    }

    @Test
    void aSessionAdvisoryLockKeepsItsBoundOnItsOwnAutoCommitConnection() throws Exception {
        try (HeldTransaction holder = HeldTransaction.start(dsl, tx -> locks.lock(tx, KEY, LockWait.forever()))) {
            assertThatThrownBy(() -> locks.lockSession(KEY, BOUNDED)).isInstanceOf(LockNotAvailableException.class);
            holder.rollback();
        }
        try (SessionLock free = locks.lockSession(KEY, BOUNDED)) {
            assertThat(free.key()).isEqualTo(KEY);
        }
    }
}

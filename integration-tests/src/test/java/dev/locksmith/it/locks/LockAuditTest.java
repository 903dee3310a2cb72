package dev.locksmith.it.locks;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static dev.locksmith.codegen.Tables.DEADLOCK_EVENT;
import static dev.locksmith.codegen.Tables.LOCK_WAIT_EVENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.LockWait;
import dev.locksmith.audit.BlockingReport;
import dev.locksmith.audit.LockAudit;
import dev.locksmith.audit.LockAuditConfig;
import dev.locksmith.codegen.tables.records.DeadlockEventRecord;
import dev.locksmith.codegen.tables.records.LockWaitEventRecord;
import dev.locksmith.exception.DeadlockException;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import dev.locksmith.it.support.TestPostgres;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The audit between real transactions: who waited, who held, who died. */
class LockAuditTest extends DatabaseTest {

    private LockAudit audit;
    private long a;
    private long b;

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(LOCK_WAIT_EVENT).execute();
        dsl.deleteFrom(DEADLOCK_EVENT).execute();
        audit = new LockAudit(
                dsl,
                LockAuditConfig.builder()
                        .probeDelay(Duration.ofMillis(20))
                        .probeInterval(Duration.ofMillis(20))
                        .build());
        a = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, BigDecimal.TEN)
                .returning()
                .fetchSingle()
                .getId();
        b = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, BigDecimal.TEN)
                .returning()
                .fetchSingle()
                .getId();
    }

    @AfterEach
    void closeAudit() {
        audit.close();
    }

    private static Object lockRow(DSLContext tx, long id, LockWait wait) {
        return wait.applyTo(tx.selectFrom(ACCOUNTS).where(ACCOUNTS.ID.eq(id)).forUpdate())
                .fetch();
    }

    /** A transaction on another connection that tags itself (its id into {@code tag}) and locks {@code row}. */
    private HeldTransaction holdTagged(long row, AtomicReference<UUID> tag) throws Exception {
        return HeldTransaction.start(dsl, tx -> {
            tag.set(audit.tag(tx).txnId());
            lockRow(tx, row, LockWait.forever());
        });
    }

    /** Guards a lock of {@code row} under {@code wait} in a tagged transaction (its id into {@code tag}); it must fail. */
    private void guardFails(long row, LockWait wait, AtomicReference<UUID> tag) {
        assertThatThrownBy(() -> dsl.transaction(c -> {
                    tag.set(audit.tag(c.dsl()).txnId());
                    audit.guard(c.dsl(), "accounts:" + row, wait, () -> lockRow(c.dsl(), row, wait));
                }))
                .isInstanceOf(LockNotAvailableException.class);
    }

    @Test
    void lockTimeoutBetweenTwoTransactionsRecordsOneEventWithWaiterHolderAndResource() throws Exception {
        AtomicReference<UUID> holderId = new AtomicReference<>();
        AtomicReference<UUID> waiterId = new AtomicReference<>();
        LockWait bounded = LockWait.upTo(Duration.ofMillis(300));
        try (HeldTransaction holder = holdTagged(a, holderId)) {
            guardFails(a, bounded, waiterId);
            holder.commit();
        }

        assertThat(audit.flush(Duration.ofSeconds(30))).isTrue();
        List<LockWaitEventRecord> events = dsl.selectFrom(LOCK_WAIT_EVENT).fetch();
        assertThat(events).hasSize(1);
        LockWaitEventRecord event = events.get(0);
        assertThat(event.getWaiterTxnId()).isEqualTo(waiterId.get());
        assertThat(event.getHolderTxnId()).isEqualTo(holderId.get());
        assertThat(event.getResourceId()).isEqualTo("accounts:" + a);
        assertThat(event.getOutcome()).isEqualTo("timeout");
        assertThat(event.getWaitMs()).isGreaterThanOrEqualTo(270L);
        assertThat(dsl.fetchCount(DEADLOCK_EVENT)).isZero();
    }

    @Test
    void aNoWaitFailureRecordsTheHolderThatPgLocksNames() throws Exception {
        AtomicReference<UUID> holderId = new AtomicReference<>();
        AtomicReference<UUID> waiterId = new AtomicReference<>();
        try (HeldTransaction holder = holdTagged(a, holderId)) {
            guardFails(a, LockWait.noWait(), waiterId);
            assertThat(audit.flush(Duration.ofSeconds(30))).isTrue();
            holder.commit();
        }
        assertThat(dsl.selectFrom(LOCK_WAIT_EVENT).fetch()).singleElement().satisfies(event -> {
            assertThat(event.getOutcome()).isEqualTo("nowait");
            assertThat(event.getWaiterTxnId()).isEqualTo(waiterId.get());
            assertThat(event.getHolderTxnId()).isEqualTo(holderId.get());
        });
    }

    @Test
    void aNoWaitFailureLeavesTheHolderEmptyWhenTwoSessionsCouldHoldTheRow() throws Exception {
        AtomicReference<UUID> ignored = new AtomicReference<>();
        try (HeldTransaction holder = holdTagged(a, ignored);
                HeldTransaction bystander = holdTagged(b, ignored)) {
            guardFails(a, LockWait.noWait(), ignored);
            assertThat(audit.flush(Duration.ofSeconds(30))).isTrue();
            bystander.commit();
            holder.commit();
        }
        assertThat(dsl.selectFrom(LOCK_WAIT_EVENT).fetch())
                .singleElement()
                .satisfies(event -> assertThat(event.getHolderTxnId()).isNull());
    }

    @Test
    void guardAfterCloseIsAClearIllegalStateAndRunsNothing() {
        LockAudit closed = new LockAudit(dsl, LockAuditConfig.defaults());
        closed.close();
        closed.close();
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> dsl.transaction(
                        c -> closed.guard(c.dsl(), "accounts:" + a, LockWait.forever(), () -> ran.getAndSet(true))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThat(ran).isFalse();
    }

    @Test
    void sharingAOneConnectionPoolWithTheApplicationNeitherDelaysTheCallerNorLosesTheRow() throws Exception {
        LockWait bounded = LockWait.upTo(Duration.ofMillis(100));
        // one connection for both: the caller's transaction holds it while the audit has a row to write
        try (HikariDataSource shared = TestPostgres.pool(database, 1)) {
            DSLContext app = DSL.using(shared, SQLDialect.POSTGRES);
            LockAudit sharing = new LockAudit(app, LockAuditConfig.defaults());
            try (HeldTransaction holder = HeldTransaction.start(dsl, tx -> lockRow(tx, a, LockWait.forever()))) {
                assertThatThrownBy(() -> app.transaction(c ->
                                sharing.guard(c.dsl(), "accounts:" + a, bounded, () -> lockRow(c.dsl(), a, bounded))))
                        .isInstanceOf(LockNotAvailableException.class);
                assertThat(sharing.flush(Duration.ofSeconds(30))).isTrue();
                holder.commit();
            } finally {
                sharing.close();
            }
            assertThat(sharing.droppedRows()).isZero();
        }
        assertThat(dsl.selectFrom(LOCK_WAIT_EVENT).fetch())
                .singleElement()
                .satisfies(event -> assertThat(event.getOutcome()).isEqualTo("timeout"));
    }

    @Test
    void aFullBufferDropsAndCountsRowsInsteadOfWaiting() throws Exception {
        try (HikariDataSource shared = TestPostgres.pool(database, 1)) {
            DSLContext app = DSL.using(shared, SQLDialect.POSTGRES);
            // every guarded statement is "slow" here, so each one queues a row
            LockAudit tiny = new LockAudit(
                    app,
                    LockAuditConfig.builder()
                            .slowWaitThreshold(Duration.ofNanos(1))
                            .bufferSize(1)
                            .build());
            try {
                app.transaction(c -> {
                    // the writer blocks on the pool's only connection, held here: one row in its
                    // hands, one in the buffer, the third dropped
                    for (int i = 0; i < 3; i++) {
                        tiny.guard(
                                c.dsl(),
                                "accounts:" + a,
                                LockWait.forever(),
                                () -> lockRow(c.dsl(), a, LockWait.forever()));
                    }
                    assertThat(tiny.droppedRows()).isEqualTo(1);
                });
                assertThat(tiny.flush(Duration.ofSeconds(30))).isTrue();
            } finally {
                tiny.close();
            }
            assertThat(tiny.droppedRows()).isEqualTo(1);
        }
        assertThat(dsl.fetchCount(LOCK_WAIT_EVENT)).isEqualTo(2);
    }

    @Test
    void successfulWaitsAreRecordedOnlyAboveTheThresholdAndTheTagDoesNotOutliveTheTransaction() throws Exception {
        LockAudit slow = new LockAudit(
                dsl,
                LockAuditConfig.builder()
                        .slowWaitThreshold(Duration.ofMillis(100))
                        .probeDelay(Duration.ofMillis(20))
                        .probeInterval(Duration.ofMillis(20))
                        .build());
        try {
            dsl.transaction(c -> slow.guard(
                    c.dsl(), "accounts:" + a, LockWait.forever(), () -> lockRow(c.dsl(), a, LockWait.forever())));
            assertThat(slow.flush(Duration.ofSeconds(30))).isTrue();
            assertThat(dsl.fetchCount(LOCK_WAIT_EVENT)).isZero();

            HeldTransaction holder = HeldTransaction.start(dsl, tx -> lockRow(tx, a, LockWait.forever()));
            CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> dsl.transaction(c -> slow.guard(
                    c.dsl(), "accounts:" + a, LockWait.forever(), () -> lockRow(c.dsl(), a, LockWait.forever()))));
            // release the holder once the waiter is visibly blocked
            awaitBlocked();
            dsl.execute("SELECT pg_sleep(0.15)");
            holder.commit();
            waiter.get(30, TimeUnit.SECONDS);
            assertThat(slow.flush(Duration.ofSeconds(30))).isTrue();
        } finally {
            slow.close();
        }
        assertThat(dsl.selectFrom(LOCK_WAIT_EVENT).fetch())
                .singleElement()
                .satisfies(e -> assertThat(e.getOutcome()).isEqualTo("acquired"));
        for (int i = 0; i < poolSize(); i++) {
            assertThat(dsl.fetchValue("SELECT current_setting('application_name')")
                            .toString())
                    .doesNotStartWith("locksmith:");
        }
    }

    @Test
    void provokedDeadlockRecordsOneEventNamingBothTransactionsAndTheVictim() throws Exception {
        CyclicBarrier bothHoldFirst = new CyclicBarrier(2);
        record Outcome(UUID txnId, LocksmithException failure) {}
        List<Outcome> outcomes = Concurrently.run(2, 60, thread -> {
            AtomicReference<UUID> me = new AtomicReference<>();
            try {
                dsl.transaction(c -> {
                    DSLContext tx = c.dsl();
                    me.set(audit.tag(tx).txnId());
                    tx.select(DSL.field("set_config('deadlock_timeout', '200ms', true)"))
                            .fetch();
                    long first = thread == 0 ? a : b;
                    long second = thread == 0 ? b : a;
                    audit.guard(
                            tx, "accounts:" + first, LockWait.forever(), () -> lockRow(tx, first, LockWait.forever()));
                    bothHoldFirst.await(30, TimeUnit.SECONDS);
                    audit.guard(
                            tx,
                            "accounts:" + second,
                            LockWait.forever(),
                            () -> lockRow(tx, second, LockWait.forever()));
                });
                return new Outcome(me.get(), null);
            } catch (LocksmithException e) {
                return new Outcome(me.get(), e);
            }
        });

        assertThat(audit.flush(Duration.ofSeconds(30))).isTrue();
        Outcome victim =
                outcomes.stream().filter(o -> o.failure() != null).findFirst().orElseThrow();
        assertThat(victim.failure()).isInstanceOf(DeadlockException.class);
        assertThat(outcomes.stream().filter(o -> o.failure() == null)).hasSize(1);
        List<DeadlockEventRecord> events = dsl.selectFrom(DEADLOCK_EVENT).fetch();
        assertThat(events).hasSize(1);
        DeadlockEventRecord event = events.get(0);
        assertThat(event.getVictimTxnId()).isEqualTo(victim.txnId());
        assertThat(event.getTxnIds().data())
                .contains(outcomes.get(0).txnId().toString())
                .contains(outcomes.get(1).txnId().toString());
        assertThat(event.getDetail()).contains("blocked by process");
    }

    @Test
    void blockingReportShowsABlockedSessionAndItsBlocker() throws Exception {
        AtomicReference<UUID> holderId = new AtomicReference<>();
        HeldTransaction holder = HeldTransaction.start(dsl, tx -> {
            holderId.set(audit.tag(tx).txnId());
            lockRow(tx, b, LockWait.forever());
        });
        CompletableFuture<Void> waiter =
                CompletableFuture.runAsync(() -> dsl.transaction(c -> lockRow(c.dsl(), b, LockWait.forever())));
        try {
            List<BlockingReport.BlockedSession> blocked = awaitBlocked();
            assertThat(blocked).hasSize(1);
            BlockingReport.BlockedSession session = blocked.get(0);
            assertThat(session.blockers()).singleElement().satisfies(blocker -> {
                assertThat(blocker.pid()).isEqualTo(holder.backendPid());
                assertThat(blocker.txnId()).contains(holderId.get());
                assertThat(blocker.state()).isEqualTo("idle in transaction");
            });
            assertThat(session.query()).containsIgnoringCase("for update");
            assertThat(session.lockType()).isEqualTo("transactionid");
        } finally {
            holder.commit();
            waiter.get(30, TimeUnit.SECONDS);
        }
        assertThat(new BlockingReport(dsl).blockedSessions()).isEmpty();
    }

    @Test
    void retentionDeletesOldEventsInBatches() {
        java.time.OffsetDateTime old = java.time.OffsetDateTime.now().minusDays(10);
        for (int i = 0; i < 5; i++) {
            dsl.insertInto(LOCK_WAIT_EVENT)
                    .set(LOCK_WAIT_EVENT.WAITER_TXN_ID, UUID.randomUUID())
                    .set(LOCK_WAIT_EVENT.RESOURCE_ID, "r")
                    .set(LOCK_WAIT_EVENT.WAIT_START, old)
                    .set(LOCK_WAIT_EVENT.WAIT_END, old)
                    .set(LOCK_WAIT_EVENT.OUTCOME, "timeout")
                    .execute();
        }
        dsl.insertInto(DEADLOCK_EVENT)
                .set(DEADLOCK_EVENT.TXN_IDS, org.jooq.JSONB.valueOf("[]"))
                .set(DEADLOCK_EVENT.DETECTED_AT, old)
                .execute();
        dsl.insertInto(DEADLOCK_EVENT)
                .set(DEADLOCK_EVENT.TXN_IDS, org.jooq.JSONB.valueOf("[]"))
                .execute();
        assertThat(audit.deleteOlderThan(Duration.ofDays(1), 2)).isEqualTo(6);
        assertThat(dsl.fetchCount(DEADLOCK_EVENT)).isEqualTo(1);
        assertThatThrownBy(() -> audit.deleteOlderThan(Duration.ofDays(1), 0)).hasMessageContaining("batchSize");
    }

    /** Polls the blocking report (a database state) until a session is blocked; bounded. */
    private List<BlockingReport.BlockedSession> awaitBlocked() {
        BlockingReport report = new BlockingReport(dsl);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            List<BlockingReport.BlockedSession> blocked = report.blockedSessions();
            if (!blocked.isEmpty()) {
                return blocked;
            }
            dsl.execute("SELECT pg_sleep(0.01)");
        }
        throw new AssertionError("no session became blocked within 10 s");
    }
}

package dev.locksmith.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.Locksmith;
import dev.locksmith.PoolingMode;
import dev.locksmith.advisory.AdvisoryKey;
import dev.locksmith.advisory.AdvisoryLocks;
import dev.locksmith.advisory.SessionLock;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.TransactionalWorker;
import org.junit.jupiter.api.Test;

/**
 * {@link PoolingMode#TRANSACTION} makes the session-scoped features refuse before they touch a
 * connection, and leaves the transaction-scoped ones alone. (Through a real PgBouncer:
 * {@link PgBouncerTest}.)
 */
class PoolingModeTest extends DatabaseTest {

    static final AdvisoryKey KEY = AdvisoryKey.of("pooling", "k");

    @Test
    void sessionAdvisoryLocksRefuseInTransactionModeAndTransactionLocksWork() {
        AdvisoryLocks locks = new AdvisoryLocks(
                Locksmith.builder(pool).poolingMode(PoolingMode.TRANSACTION).build());
        assertThatThrownBy(() -> locks.lockSession(KEY, LockWait.forever()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("session advisory lock")
                .hasMessageContaining("PoolingMode.TRANSACTION")
                .hasMessageContaining("lock(tx");
        assertThatThrownBy(() -> locks.lockSessionShared(KEY, LockWait.forever()))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> locks.tryLockSession(KEY)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> locks.tryLockSessionShared(KEY)).isInstanceOf(IllegalStateException.class);
        assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();

        boolean sharedToo = dsl.transactionResult(c -> {
            locks.lock(c.dsl(), KEY, LockWait.forever());
            return locks.tryLockShared(c.dsl(), KEY);
        });
        assertThat(sharedToo).isTrue();
        try (SessionLock session = new AdvisoryLocks(
                        Locksmith.builder(pool).poolingMode(PoolingMode.SESSION).build())
                .lockSession(KEY, LockWait.forever())) {
            assertThat(session.key()).isEqualTo(KEY);
        }
    }

    @Test
    void aWorkerRefusesListenInTransactionModeAndBuildsWithPolling() {
        assertThatThrownBy(() -> JobWorker.builder(
                                new JobQueue(Locksmith.builder(pool)
                                        .poolingMode(PoolingMode.TRANSACTION)
                                        .build()),
                                "q",
                                (job, tx) -> {})
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("LISTEN")
                .hasMessageContaining("listen(false)");
        try (JobWorker polling = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool)
                                .poolingMode(PoolingMode.TRANSACTION)
                                .build()),
                        "q",
                        (job, tx) -> {})
                .listen(false)
                .build()) {
            assertThat(polling).isNotNull();
        }
        assertThatThrownBy(() -> TransactionalWorker.builder(
                                new JobQueue(Locksmith.builder(pool)
                                        .poolingMode(PoolingMode.TRANSACTION)
                                        .build()),
                                "q",
                                (jobs, tx) -> {})
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("LISTEN");
        assertThat(TransactionalWorker.builder(
                                new JobQueue(Locksmith.builder(pool)
                                        .poolingMode(PoolingMode.TRANSACTION)
                                        .build()),
                                "q",
                                (jobs, tx) -> {})
                        .listen(false)
                        .build())
                .isNotNull();
    }
}

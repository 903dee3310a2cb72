package dev.locksmith.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.PoolingMode;
import dev.locksmith.advisory.AdvisoryKey;
import dev.locksmith.advisory.AdvisoryLocks;
import dev.locksmith.advisory.AdvisoryLocksConfig;
import dev.locksmith.advisory.SessionLock;
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
                pool,
                AdvisoryLocksConfig.builder()
                        .poolingMode(PoolingMode.TRANSACTION)
                        .build());
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
                        pool,
                        AdvisoryLocksConfig.builder()
                                .poolingMode(PoolingMode.SESSION)
                                .build())
                .lockSession(KEY, LockWait.forever())) {
            assertThat(session.key()).isEqualTo(KEY);
        }
    }

    @Test
    void aWorkerRefusesListenInTransactionModeAndBuildsWithPolling() {
        assertThatThrownBy(() -> JobWorker.builder(pool, "q", (job, tx) -> {})
                        .poolingMode(PoolingMode.TRANSACTION)
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("LISTEN")
                .hasMessageContaining("listen(false)");
        try (JobWorker polling = JobWorker.builder(pool, "q", (job, tx) -> {})
                .poolingMode(PoolingMode.TRANSACTION)
                .listen(false)
                .build()) {
            assertThat(polling).isNotNull();
        }
        assertThatThrownBy(() -> TransactionalWorker.builder(pool, "q", (jobs, tx) -> {})
                        .poolingMode(PoolingMode.TRANSACTION)
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("LISTEN");
        assertThat(TransactionalWorker.builder(pool, "q", (jobs, tx) -> {})
                        .poolingMode(PoolingMode.TRANSACTION)
                        .listen(false)
                        .build())
                .isNotNull();
    }
}

package dev.locksmith.it.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.advisory.AdvisoryKey;
import dev.locksmith.advisory.AdvisoryLocks;
import dev.locksmith.advisory.SessionLock;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.it.support.DatabaseTest;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Advisory locks between real sessions; pg_locks is the witness that nothing is left behind. */
class AdvisoryLocksTest extends DatabaseTest {

    static final AdvisoryKey CUSTOMER_42 = AdvisoryKey.of("invoices", "customer-42");

    private AdvisoryLocks locks;

    @BeforeEach
    void setUp() {
        locks = new AdvisoryLocks(pool);
    }

    /** Advisory locks on {@code key} currently granted, in any session of this database. */
    private int heldInPgLocks(AdvisoryKey key) {
        return dsl.fetchOne(
                        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                                + "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                                + "AND classid = ?::oid AND objid = ?::oid AND objsubid = 2",
                        Integer.toUnsignedLong(key.classId()),
                        Integer.toUnsignedLong(key.objId()))
                .get(0, Integer.class);
    }

    @Test
    void hashIsStableFixedVectors() {
        // Computed independently (Python hashlib, first 4 bytes of SHA-256, big-endian, signed) and
        // checked in; if these change, every deployed service would lock different keys.
        assertThat(AdvisoryKey.of("invoices", "customer-42"))
                .extracting(AdvisoryKey::classId, AdvisoryKey::objId)
                .containsExactly(1226681300, -1606030541);
        assertThat(AdvisoryKey.of("invoices", 42L))
                .extracting(AdvisoryKey::classId, AdvisoryKey::objId)
                .containsExactly(1226681300, -1497689284);
        assertThat(AdvisoryKey.of("accounts", "é✓"))
                .extracting(AdvisoryKey::classId, AdvisoryKey::objId)
                .containsExactly(-1134386239, 511167345);
        assertThatThrownBy(() -> AdvisoryKey.of(" ", "x")).hasMessageContaining("namespace");
        assertThatThrownBy(() -> AdvisoryKey.of("ns", "")).hasMessageContaining("businessKey");
    }

    @Test
    void heldSessionLockMakesTryFailBoundedWaitTimeOutAndIsFreeAfterRelease() {
        SessionLock holder = locks.lockSession(CUSTOMER_42, LockWait.forever());
        try {
            assertThat(heldInPgLocks(CUSTOMER_42)).isEqualTo(1);
            assertThat(locks.tryLockSession(CUSTOMER_42)).isEmpty();
            boolean tried = dsl.transactionResult(c -> locks.tryLock(c.dsl(), CUSTOMER_42));
            assertThat(tried).isFalse();
            assertThatThrownBy(() -> locks.lockSession(CUSTOMER_42, LockWait.upTo(Duration.ofMillis(200))))
                    .isInstanceOf(LockNotAvailableException.class);
            assertThatThrownBy(() -> dsl.transaction(
                            c -> locks.lock(c.dsl(), CUSTOMER_42, LockWait.upTo(Duration.ofMillis(200)))))
                    .isInstanceOf(LockNotAvailableException.class);
        } finally {
            holder.close();
        }
        assertThat(heldInPgLocks(CUSTOMER_42)).isZero();
        try (SessionLock next = locks.lockSession(CUSTOMER_42, LockWait.upTo(Duration.ofSeconds(5)))) {
            assertThat(heldInPgLocks(CUSTOMER_42)).isEqualTo(1);
        }
        assertThat(heldInPgLocks(CUSTOMER_42)).isZero();
    }

    @Test
    void transactionLocksAreGoneAfterCommitAndAfterRollback() {
        dsl.transaction(c -> {
            locks.lock(c.dsl(), CUSTOMER_42, LockWait.forever());
            assertThat(heldInPgLocks(CUSTOMER_42)).isEqualTo(1);
        });
        assertThat(heldInPgLocks(CUSTOMER_42)).isZero();

        assertThatThrownBy(() -> dsl.transaction(c -> {
                    assertThat(locks.tryLock(c.dsl(), CUSTOMER_42)).isTrue();
                    assertThat(heldInPgLocks(CUSTOMER_42)).isEqualTo(1);
                    throw new IllegalStateException("roll back");
                }))
                .hasMessage("roll back");
        assertThat(heldInPgLocks(CUSTOMER_42)).isZero();
        assertThatThrownBy(() -> locks.lock(dsl, CUSTOMER_42, LockWait.forever()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("open transaction");
    }

    @Test
    void sessionHandleClosedInFinallyAfterAnExceptionLeavesNoLock() {
        assertThatThrownBy(() -> {
                    try (SessionLock lock = locks.lockSession(CUSTOMER_42, LockWait.forever())) {
                        assertThat(heldInPgLocks(CUSTOMER_42)).isEqualTo(1);
                        throw new IllegalStateException("body failed");
                    }
                })
                .hasMessage("body failed");
        assertThat(heldInPgLocks(CUSTOMER_42)).isZero();
        assertThat(dsl.fetchOne("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
                        .get(0, Integer.class))
                .isZero();
    }

    @Test
    void distinctKeysDoNotBlockAndSharedLocksShare() {
        try (SessionLock held = locks.lockSession(CUSTOMER_42, LockWait.forever())) {
            Optional<SessionLock> other = locks.tryLockSession(AdvisoryKey.of("invoices", "customer-43"));
            assertThat(other).isPresent();
            other.get().close();
            Optional<SessionLock> otherNamespace = locks.tryLockSession(AdvisoryKey.of("refunds", "customer-42"));
            assertThat(otherNamespace).isPresent();
            otherNamespace.get().close();
        }
        try (SessionLock a = locks.lockSessionShared(CUSTOMER_42, LockWait.forever());
                SessionLock b = locks.tryLockSessionShared(CUSTOMER_42).orElseThrow()) {
            assertThat(heldInPgLocks(CUSTOMER_42)).isEqualTo(2);
            assertThat(locks.tryLockSession(CUSTOMER_42)).isEmpty();
        }
        assertThatThrownBy(() -> locks.lockSession(CUSTOMER_42, LockWait.noWait()))
                .hasMessageContaining("try");
    }
}

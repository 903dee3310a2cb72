package dev.locksmith.audit;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of a {@link LockAudit}.
 *
 * @param slowWaitThreshold also record waits that succeeded but took at least this long; empty
 *     records only failures (default)
 * @param probeDelay how long a guarded statement may wait before the audit starts asking
 *     {@code pg_blocking_pids()} who blocks it (default 50 ms; statements that finish sooner cost
 *     nothing extra)
 * @param probeInterval how often it asks again while the wait goes on (default 100 ms)
 */
public record LockAuditConfig(Optional<Duration> slowWaitThreshold, Duration probeDelay, Duration probeInterval) {

    public LockAuditConfig {
        Objects.requireNonNull(slowWaitThreshold, "slowWaitThreshold");
        slowWaitThreshold.ifPresent(t -> positive("slowWaitThreshold", t));
        positive("probeDelay", probeDelay);
        positive("probeInterval", probeInterval);
    }

    /** Failures only, probing after 50 ms and every 100 ms. */
    public static LockAuditConfig defaults() {
        return new LockAuditConfig(Optional.empty(), Duration.ofMillis(50), Duration.ofMillis(100));
    }

    /** A copy that also records successful waits of at least {@code threshold}. */
    public LockAuditConfig withSlowWaitThreshold(Duration threshold) {
        return new LockAuditConfig(Optional.of(threshold), probeDelay, probeInterval);
    }

    /** A copy with other probe timings. */
    public LockAuditConfig withProbe(Duration delay, Duration interval) {
        return new LockAuditConfig(slowWaitThreshold, delay, interval);
    }

    private static void positive(String what, Duration value) {
        Objects.requireNonNull(value, what);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, was " + value);
        }
    }
}

package dev.locksmith.audit;

import dev.locksmith.internal.Durations;
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
 * @param bufferSize how many audit rows may wait for the writer thread (default 10,000, 1 to
 *     1,000,000); rows beyond it are dropped and counted in {@link LockAudit#droppedRows()}
 */
public record LockAuditConfig(Optional<Duration> slowWaitThreshold, Duration probeDelay, Duration probeInterval,
        int bufferSize) {

    /** Default of {@link #bufferSize()}. */
    public static final int DEFAULT_BUFFER_SIZE = 10_000;

    public LockAuditConfig {
        Objects.requireNonNull(slowWaitThreshold, "slowWaitThreshold");
        slowWaitThreshold.ifPresent(t -> Durations.positive("slowWaitThreshold", t));
        Durations.positive("probeDelay", probeDelay);
        Durations.positive("probeInterval", probeInterval);
        if (bufferSize < 1 || bufferSize > 1_000_000) {
            throw new IllegalArgumentException("bufferSize must be between 1 and 1000000, was " + bufferSize);
        }
    }

    /** Failures only, probing after 50 ms and every 100 ms, buffering up to 10,000 rows. */
    public static LockAuditConfig defaults() {
        return new LockAuditConfig(Optional.empty(), Duration.ofMillis(50), Duration.ofMillis(100), DEFAULT_BUFFER_SIZE);
    }

    /** A copy that also records successful waits of at least {@code threshold}. */
    public LockAuditConfig withSlowWaitThreshold(Duration threshold) {
        return new LockAuditConfig(Optional.of(threshold), probeDelay, probeInterval, bufferSize);
    }

    /** A copy with other probe timings. */
    public LockAuditConfig withProbe(Duration delay, Duration interval) {
        return new LockAuditConfig(slowWaitThreshold, delay, interval, bufferSize);
    }

    /** A copy with another buffer size. */
    public LockAuditConfig withBufferSize(int size) {
        return new LockAuditConfig(slowWaitThreshold, probeDelay, probeInterval, size);
    }
}

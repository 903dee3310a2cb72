package dev.locksmith.micrometer;

import io.micrometer.core.instrument.Clock;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * A value read from the database at most once per interval, however often gauges ask for it. The
 * gauge that finds it due reads it on its own thread; a gauge asking while that read runs gets
 * the previous value at once instead of queueing behind it. A failed read keeps the previous
 * value, is logged at WARN with its exception, and is tried again after the interval, so that a
 * database outage costs one failed statement per interval and never an exception in a gauge.
 *
 * @param <T> what is read
 */
final class CachedReading<T> {

    private final Supplier<T> read;
    private final String what;
    private final Duration interval;
    private final long intervalNanos;
    private final Clock clock;
    private final Logger log;
    private final ReentrantLock reading = new ReentrantLock();
    private volatile @Nullable T value;
    private volatile boolean tried;
    private volatile long triedAt;
    private volatile boolean closed;

    /**
     * @param read the statement
     * @param what what it reads, for the log: "the depth of queue emails"
     * @param interval how long a value is used before it is read again
     * @param clock the registry's clock (a test's {@code MockClock} makes the interval pass)
     * @param log the binder's logger
     */
    CachedReading(Supplier<T> read, String what, Duration interval, Clock clock, Logger log) {
        this.read = read;
        this.what = what;
        this.interval = interval;
        this.intervalNanos = interval.toNanos();
        this.clock = clock;
        this.log = log;
    }

    /** The value, read now if the last try is older than the interval; null until a read succeeded. */
    @Nullable
    T get() {
        if (due() && reading.tryLock()) {
            try {
                if (due()) {
                    refresh();
                }
            } finally {
                reading.unlock();
            }
        }
        return value;
    }

    /** The last value read, without reading; null until a read succeeded. */
    @Nullable
    T last() {
        return value;
    }

    /** No read after this; the last value stays. */
    void close() {
        closed = true;
    }

    private boolean due() {
        return !closed && (!tried || clock.monotonicTime() - triedAt >= intervalNanos);
    }

    private void refresh() {
        long now = clock.monotonicTime();
        try {
            value = read.get();
        } catch (RuntimeException e) {
            log.warn(
                    "could not read {}; its gauges keep the last value read ({}) and the next try is in {}",
                    what,
                    value == null ? "none yet" : value,
                    interval,
                    e);
        } finally {
            triedAt = now;
            tried = true;
        }
    }
}

package dev.locksmith.micrometer;

import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.pool.PoolStats;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.Objects;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gauges of a channel account pool, {@code locksmith.pool.accounts} with {@code status}
 * {@code leased} (an unexpired lease), {@code idle} (never leased, or released) and
 * {@code expired} (a lease that ran out: acquirable again), from
 * {@link ChannelAccountPool#stats()} (one scan of the table, no lock) at most once per refresh
 * interval, however often the registry is scraped.
 *
 * <p>No thread of its own: the first gauge read after the interval runs the statement on the
 * reading thread, with the registry's clock deciding when the interval has passed. Until the first
 * successful read the gauges are {@code NaN}. A read that fails keeps the last values, is logged
 * at WARN (logger {@code dev.locksmith.micrometer.PoolMetrics}) with the exception, and is tried
 * again after the interval; a gauge never throws.
 *
 * <pre>{@code
 * PoolMetrics.builder(pool).refreshInterval(Duration.ofSeconds(30)).build().bindTo(registry);
 * }</pre>
 */
public final class PoolMetrics implements MeterBinder, AutoCloseable {

    /** The default refresh interval: 15 s. */
    public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofSeconds(15);

    private static final Logger LOG = LoggerFactory.getLogger(PoolMetrics.class);

    private final ChannelAccountPool pool;
    private final Duration refreshInterval;
    private final GaugeBinding binding = new GaugeBinding("PoolMetrics");
    private volatile @Nullable CachedReading<PoolStats> reading;

    private PoolMetrics(Builder b) {
        this.pool = b.pool;
        this.refreshInterval = b.refreshInterval;
    }

    /**
     * A builder of gauges for {@code pool} (its {@code DSLContext} runs the statements).
     *
     * @param pool the pool
     * @return a builder with a refresh interval of 15 s
     */
    public static Builder builder(ChannelAccountPool pool) {
        return new Builder(pool);
    }

    /** {@return how long a reading is used before the next gauge read reads again} */
    public Duration refreshInterval() {
        return refreshInterval;
    }

    /**
     * Registers the three gauges in {@code registry}. Binding again to the same registry does
     * nothing.
     *
     * @param registry where to register; its clock times the refresh interval
     * @throws IllegalStateException when bound to another registry already, or closed
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        if (!binding.bind(registry)) {
            return;
        }
        CachedReading<PoolStats> stats = new CachedReading<>(
                pool::stats,
                "the channel account pool's counts",
                refreshInterval,
                registry.config().clock(),
                LOG);
        reading = stats;
        gauge(registry, "leased", stats, PoolStats::leased);
        gauge(registry, "idle", stats, PoolStats::idle);
        gauge(registry, "expired", stats, PoolStats::expired);
    }

    /** Removes the gauges from the registry; no statement runs after this. Idempotent. */
    @Override
    public synchronized void close() {
        CachedReading<PoolStats> stats = reading;
        if (binding.close() && stats != null) {
            stats.close();
        }
    }

    private void gauge(
            MeterRegistry registry, String status, CachedReading<PoolStats> stats, ToDoubleFunction<PoolStats> count) {
        binding.add(Gauge.builder("locksmith.pool.accounts", stats, r -> {
                    @Nullable PoolStats read = r.get();
                    return read == null ? Double.NaN : count.applyAsDouble(read);
                })
                .description("Channel accounts by lease status")
                .tag("status", status)
                .strongReference(true)
                .register(registry));
    }

    /** Builds {@link PoolMetrics}; each setting is checked when set. */
    public static final class Builder {
        private final ChannelAccountPool pool;
        private Duration refreshInterval = DEFAULT_REFRESH_INTERVAL;

        private Builder(ChannelAccountPool pool) {
            this.pool = Objects.requireNonNull(pool, "pool");
        }

        /**
         * How long a reading is used: the gauges run their statement at most once per interval.
         *
         * @param refreshInterval positive, at most a day; default 15 s
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder refreshInterval(Duration refreshInterval) {
            this.refreshInterval = Intervals.refreshInterval(refreshInterval);
            return this;
        }

        /** {@return the gauges, not bound to a registry yet} */
        public PoolMetrics build() {
            return new PoolMetrics(this);
        }
    }
}

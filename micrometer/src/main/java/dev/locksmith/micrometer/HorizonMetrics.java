package dev.locksmith.micrometer;

import dev.locksmith.audit.HorizonHolder;
import dev.locksmith.audit.HorizonReport;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gauges of what holds the database's MVCC horizon back ({@link HorizonReport}), read with one
 * statement at most once per refresh interval, however often the registry is scraped:
 *
 * <ul>
 *   <li>{@code locksmith.horizon.age} (seconds): the longest any holder with a known start has held
 *       it (a session's open transaction, a prepared transaction); 0 when none does;</li>
 *   <li>{@code locksmith.horizon.xmin.age} (transactions): the greatest {@code age(xmin)} of any
 *       holder, slots and standbys included; 0 when none.</li>
 * </ul>
 *
 * <p>No tags: who holds the horizon (a pid, a slot name) would be an unbounded tag; the
 * {@link HorizonReport}, the workers' WARN line, the health detail and the dashboard name it. No
 * thread of its own: the first gauge read after the interval runs the statement on the reading
 * thread, with the registry's clock deciding when the interval has passed. Until the first
 * successful read the gauges are {@code NaN}; a failed read keeps the last values and is logged at
 * WARN (logger {@code dev.locksmith.micrometer.HorizonMetrics}).
 *
 * <pre>{@code
 * HorizonMetrics.builder(new HorizonReport(locksmith)).build().bindTo(registry);
 * }</pre>
 */
public final class HorizonMetrics implements MeterBinder, AutoCloseable {

    /** The default refresh interval: 15 s. */
    public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofSeconds(15);

    private static final Logger LOG = LoggerFactory.getLogger(HorizonMetrics.class);

    private final HorizonReport report;
    private final Duration refreshInterval;
    private final GaugeBinding binding = new GaugeBinding("HorizonMetrics");
    private volatile @Nullable CachedReading<Oldest> reading;

    /** The two figures of one reading. */
    private record Oldest(double seconds, double transactions) {
        static Oldest of(List<HorizonHolder> holders) {
            long millis = 0;
            long transactions = 0;
            for (HorizonHolder h : holders) {
                millis = Math.max(millis, h.age().map(Duration::toMillis).orElse(0L));
                transactions = Math.max(transactions, h.xminAge());
            }
            return new Oldest(millis / 1000.0, transactions);
        }
    }

    private HorizonMetrics(Builder b) {
        this.report = b.report;
        this.refreshInterval = b.refreshInterval;
    }

    /**
     * A builder of gauges read through {@code report}.
     *
     * @param report reads the holders of the database to watch
     * @return a builder with a refresh interval of 15 s
     */
    public static Builder builder(HorizonReport report) {
        return new Builder(report);
    }

    /** {@return how long a reading is used before the next gauge read reads again} */
    public Duration refreshInterval() {
        return refreshInterval;
    }

    /**
     * Registers the two gauges in {@code registry}. Binding again to the same registry does
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
        CachedReading<Oldest> oldest = new CachedReading<>(
                () -> Oldest.of(report.holders()),
                "what holds the MVCC horizon back",
                refreshInterval,
                registry.config().clock(),
                LOG);
        reading = oldest;
        gauge(
                registry,
                "locksmith.horizon.age",
                "seconds",
                oldest,
                Oldest::seconds,
                "How long the oldest holder of the MVCC horizon has held it back");
        gauge(
                registry,
                "locksmith.horizon.xmin.age",
                "transactions",
                oldest,
                Oldest::transactions,
                "Transactions started since the oldest xmin that holds the MVCC horizon back");
    }

    /** Removes the gauges from the registry; no statement runs after this. Idempotent. */
    @Override
    public synchronized void close() {
        CachedReading<Oldest> oldest = reading;
        if (binding.close() && oldest != null) {
            oldest.close();
        }
    }

    private void gauge(
            MeterRegistry registry,
            String name,
            String unit,
            CachedReading<Oldest> oldest,
            ToDoubleFunction<Oldest> value,
            String description) {
        binding.add(Gauge.builder(name, oldest, r -> {
                    @Nullable Oldest read = r.get();
                    return read == null ? Double.NaN : value.applyAsDouble(read);
                })
                .description(description)
                .baseUnit(unit)
                .strongReference(true)
                .register(registry));
    }

    /** Builds {@link HorizonMetrics}; each setting is checked when set. */
    public static final class Builder {
        private final HorizonReport report;
        private Duration refreshInterval = DEFAULT_REFRESH_INTERVAL;

        private Builder(HorizonReport report) {
            this.report = Objects.requireNonNull(report, "report");
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
        public HorizonMetrics build() {
            return new HorizonMetrics(this);
        }
    }
}

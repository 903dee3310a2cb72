package dev.locksmith.micrometer;

import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.HistorySize;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.QueueDepth;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gauges of how deep some queues are, measured with {@link JobQueue#depth(String, int)} (bounded
 * index work, one read-only statement per queue, no lock) at most once per refresh interval per
 * queue, however often the registry is scraped:
 *
 * <ul>
 *   <li>{@code locksmith.jobs.depth} ({@code queue}, {@code status} {@code pending} or
 *       {@code running}): live jobs, counted up to the cap; a value equal to the cap means "at
 *       least this many". Pending counts jobs due or not.</li>
 *   <li>{@code locksmith.jobs.oldest.pending.age} ({@code queue}; base unit seconds): how long
 *       the oldest due pending job has been due; <b>0 when no pending job is due</b> (the queue
 *       is caught up), so that an alert on the age is a plain threshold.</li>
 *   <li>{@code locksmith.jobs.limit.keys} ({@code queue}): keys whose running jobs reach their
 *       concurrency limit or whose window of starts is full (a rate limit), and {@code locksmith.jobs.limit.held.back} ({@code queue}): the due
 *       pending jobs of those keys, counted up to the cap, which wait for their key rather than
 *       for a worker ({@link dev.locksmith.jobs.ConcurrencyLimits#heldBack}); 0 on a queue without
 *       limits.</li>
 *   <li>{@code locksmith.jobs.limit.key.held.back} ({@code queue}, {@code key}), only when
 *       {@link Builder#keysPerQueue} is set: the due pending jobs of one key at its limit, counted
 *       up to the cap, for the keys of each queue that hold back the most
 *       ({@link dev.locksmith.jobs.ConcurrencyLimits#heldBackByKey}). Off by default, and at most
 *       {@value #MAX_KEYS_PER_QUEUE} keys a queue, because a key is usually a tenant: a tag per
 *       tenant would be a time series per tenant, which a metrics backend pays for by the series;
 *       only the keys that hold jobs back now are tagged, and a key that leaves the top keys (its
 *       jobs ran, its limit was raised, others hold back more) loses its gauge at the next read.
 *       It costs one more statement per queue and interval, whose work grows with the keys at a
 *       limit (one bounded index range each).</li>
 *   <li>{@code locksmith.jobs.history.rows} and {@code locksmith.jobs.history.partitions}: the
 *       size of the history of finished jobs ({@link JobQueue#historySize()}): an <b>estimate</b>
 *       from the statistics ({@code pg_class.reltuples}, as of each partition's last ANALYZE),
 *       read from the catalog, so that a scrape costs the same at 10<sup>8</sup> finished jobs
 *       as at 10<sup>3</sup>; finished jobs are never counted.</li>
 * </ul>
 *
 * <p>No thread of its own: the first gauge read after the interval runs the statement on the
 * reading thread (a scrape), with the registry's clock deciding when the interval has passed.
 * Until the first successful read every gauge is {@code NaN}, and there is no per-key gauge (no
 * key to tag yet); a key that a read finds has its gauge from then on, which a scrape under way
 * may miss. A read that fails keeps the last values (and keys), is logged at WARN (logger
 * {@code dev.locksmith.micrometer.QueueDepthMetrics}) with the exception, and is tried again after
 * the interval; a gauge never throws.
 *
 * <pre>{@code
 * QueueDepthMetrics depth = QueueDepthMetrics.builder(queue, List.of("emails", "invoices")).build();
 * depth.bindTo(registry);
 * }</pre>
 */
public final class QueueDepthMetrics implements MeterBinder, AutoCloseable {

    /** The default refresh interval: 15 s. */
    public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofSeconds(15);

    /** The default cap of the counts: 10,000. */
    public static final int DEFAULT_CAP = 10_000;

    /** The most queues one instance measures: each is a statement per refresh, and a tag value. */
    public static final int MAX_QUEUES = 100;

    /** The most keys per queue with a gauge of their own ({@link Builder#keysPerQueue}). */
    public static final int MAX_KEYS_PER_QUEUE = ConcurrencyLimits.MAX_KEYS_LISTED;

    private static final Logger LOG = LoggerFactory.getLogger(QueueDepthMetrics.class);

    private final JobQueue jobQueue;
    private final List<String> queues;
    private final Duration refreshInterval;
    private final int cap;
    private final int keysPerQueue;
    private final GaugeBinding binding = new GaugeBinding("QueueDepthMetrics");
    private final List<CachedReading<?>> readings = new ArrayList<>();
    private final List<KeyHeldBackGauges> keyGauges = new ArrayList<>();

    private QueueDepthMetrics(Builder b) {
        this.jobQueue = b.jobQueue;
        this.queues = List.copyOf(b.queues);
        this.refreshInterval = b.refreshInterval;
        this.cap = b.cap;
        this.keysPerQueue = b.keysPerQueue;
    }

    /**
     * A builder of gauges for {@code queues}, measured through {@code jobQueue} (its
     * {@code DSLContext} runs the statements).
     *
     * @param jobQueue the queue repository
     * @param queues the queue names, 1 to {@value #MAX_QUEUES} of them, each 1 to 128 characters
     *     and not blank; duplicates count once
     * @return a builder with a refresh interval of 15 s and a cap of 10,000
     * @throws IllegalArgumentException for no queue, too many, or an invalid name
     */
    public static Builder builder(JobQueue jobQueue, Collection<String> queues) {
        return new Builder(jobQueue, queues);
    }

    /** {@return the queues measured, in the order given} */
    public List<String> queues() {
        return queues;
    }

    /** {@return how long a measurement is used before the next gauge read measures again} */
    public Duration refreshInterval() {
        return refreshInterval;
    }

    /** {@return the count at which counting stops} */
    public int cap() {
        return cap;
    }

    /** {@return the most keys per queue with a gauge of their own; 0 when the per-key gauge is off} */
    public int keysPerQueue() {
        return keysPerQueue;
    }

    /**
     * Registers the gauges of every queue in {@code registry}. Binding again to the same registry
     * does nothing.
     *
     * @param registry where to register; its clock times the refresh interval
     * @throws IllegalStateException when bound to another registry already, or closed
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        if (!binding.bind(registry)) {
            return;
        }
        for (String queue : queues) {
            CachedReading<QueueDepth> reading = new CachedReading<>(
                    () -> jobQueue.depth(queue, cap),
                    "the depth of queue " + queue,
                    refreshInterval,
                    registry.config().clock(),
                    LOG);
            readings.add(reading);
            CachedReading<ConcurrencyLimits.HeldBack> held = new CachedReading<>(
                    () -> jobQueue.concurrencyLimits().heldBack(queue, cap),
                    "what the concurrency limits of queue " + queue + " hold back",
                    refreshInterval,
                    registry.config().clock(),
                    LOG);
            readings.add(held);
            // the per-key gauges come and go with their keys: the queue's limit gauges, always
            // there, start their reads
            @Nullable
            KeyHeldBackGauges keys = keysPerQueue == 0
                    ? null
                    : new KeyHeldBackGauges(jobQueue, queue, keysPerQueue, cap, refreshInterval, registry, LOG);
            if (keys != null) {
                keyGauges.add(keys);
            }
            binding.add(Gauge.builder("locksmith.jobs.limit.keys", held, r -> limits(r, keys, h -> h.keysAtLimit()))
                    .description(
                            "Keys whose running jobs reach their concurrency limit, or whose window of starts is full")
                    .tag("queue", queue)
                    .strongReference(true)
                    .register(registry));
            binding.add(Gauge.builder(
                            "locksmith.jobs.limit.held.back", held, r -> limits(r, keys, h -> h.jobsHeldBack()))
                    .description("Due pending jobs of keys at their concurrency or rate limit, counted up to the cap ("
                            + cap + ")")
                    .tag("queue", queue)
                    .strongReference(true)
                    .register(registry));
            gauge(registry, "locksmith.jobs.depth", queue, "pending", reading, QueueDepth::pending);
            gauge(registry, "locksmith.jobs.depth", queue, "running", reading, QueueDepth::running);
            binding.add(Gauge.builder(
                            "locksmith.jobs.oldest.pending.age",
                            reading,
                            r -> value(
                                    r,
                                    d -> d.oldestDuePendingAge()
                                            .map(QueueDepthMetrics::seconds)
                                            .orElse(0.0)))
                    .description("How long the oldest due pending job has been due; 0 when none is due")
                    .baseUnit("seconds")
                    .tag("queue", queue)
                    .strongReference(true)
                    .register(registry));
        }
        CachedReading<HistorySize> history = new CachedReading<>(
                jobQueue::historySize,
                "the size of the job history",
                refreshInterval,
                registry.config().clock(),
                LOG);
        readings.add(history);
        binding.add(Gauge.builder("locksmith.jobs.history.rows", history, r -> value(r, h -> h.estimatedRows()))
                .description("Finished jobs kept in the history, by the statistics (pg_class.reltuples as of the "
                        + "last ANALYZE): an estimate, read from the catalog, never counted")
                .baseUnit("rows")
                .strongReference(true)
                .register(registry));
        binding.add(Gauge.builder("locksmith.jobs.history.partitions", history, r -> value(r, h -> h.partitions()))
                .description("Partitions of the job history (one per day, and the default partition)")
                .strongReference(true)
                .register(registry));
    }

    /** Removes the gauges from the registry; no statement runs after this. Idempotent. */
    @Override
    public synchronized void close() {
        if (binding.close()) {
            readings.forEach(CachedReading::close);
            keyGauges.forEach(KeyHeldBackGauges::close);
        }
    }

    private void gauge(
            MeterRegistry registry,
            String name,
            String queue,
            String status,
            CachedReading<QueueDepth> reading,
            ToDoubleFunction<QueueDepth> count) {
        binding.add(Gauge.builder(name, reading, r -> value(r, count))
                .description("Live jobs by status, counted up to the cap (" + cap + ")")
                .tag("queue", queue)
                .tag("status", status)
                .strongReference(true)
                .register(registry));
    }

    private static double limits(
            CachedReading<ConcurrencyLimits.HeldBack> reading,
            @Nullable KeyHeldBackGauges keys,
            ToDoubleFunction<ConcurrencyLimits.HeldBack> of) {
        if (keys != null) {
            keys.refresh();
        }
        return value(reading, of);
    }

    private static <T> double value(CachedReading<T> reading, ToDoubleFunction<T> of) {
        @Nullable T read = reading.get();
        return read == null ? Double.NaN : of.applyAsDouble(read);
    }

    private static double seconds(Duration age) {
        return age.getSeconds() + age.getNano() / 1e9;
    }

    /** Builds {@link QueueDepthMetrics}; each setting is checked when set. */
    public static final class Builder {
        private final JobQueue jobQueue;
        private final Set<String> queues;
        private Duration refreshInterval = DEFAULT_REFRESH_INTERVAL;
        private int cap = DEFAULT_CAP;
        private int keysPerQueue;

        private Builder(JobQueue jobQueue, Collection<String> queues) {
            this.jobQueue = Objects.requireNonNull(jobQueue, "jobQueue");
            Objects.requireNonNull(queues, "queues");
            Set<String> names = new LinkedHashSet<>();
            for (String queue : queues) {
                Objects.requireNonNull(queue, "queues must not contain null");
                if (queue.isBlank() || queue.length() > 128) {
                    throw new IllegalArgumentException(
                            "queues must be 1 to 128 characters and not blank, was '" + queue + "'");
                }
                names.add(queue);
            }
            if (names.isEmpty() || names.size() > MAX_QUEUES) {
                throw new IllegalArgumentException(
                        "queues must name 1 to " + MAX_QUEUES + " queues, named " + names.size());
            }
            this.queues = names;
        }

        /**
         * How long a measurement is used: the gauges of a queue run its statement at most once
         * per interval.
         *
         * @param refreshInterval positive, at most a day; default 15 s
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder refreshInterval(Duration refreshInterval) {
            this.refreshInterval = Intervals.refreshInterval(refreshInterval);
            return this;
        }

        /**
         * Where counting stops, which bounds the statement's work on a deep queue.
         *
         * @param cap 1 to 1,000,000; default 10,000
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder cap(int cap) {
            if (cap < 1 || cap > 1_000_000) {
                throw new IllegalArgumentException("cap must be between 1 and 1000000, was " + cap);
            }
            this.cap = cap;
            return this;
        }

        /**
         * Turns on the gauge {@code locksmith.jobs.limit.key.held.back}, tagged {@code queue} and
         * {@code key}, for the {@code keysPerQueue} keys of each queue at a limit that hold back
         * the most due jobs (see the class description): at most
         * {@code keysPerQueue * queues} time series, each key's present only while it is among
         * them. Read with one more statement per queue at most once per refresh interval, together
         * with the queue's limit gauges.
         *
         * @param keysPerQueue 0 (off, the default) to {@value #MAX_KEYS_PER_QUEUE}
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder keysPerQueue(int keysPerQueue) {
            if (keysPerQueue < 0 || keysPerQueue > MAX_KEYS_PER_QUEUE) {
                throw new IllegalArgumentException(
                        "keysPerQueue must be between 0 and " + MAX_KEYS_PER_QUEUE + ", was " + keysPerQueue);
            }
            this.keysPerQueue = keysPerQueue;
            return this;
        }

        /** {@return the gauges, not bound to a registry yet} */
        public QueueDepthMetrics build() {
            return new QueueDepthMetrics(this);
        }
    }
}

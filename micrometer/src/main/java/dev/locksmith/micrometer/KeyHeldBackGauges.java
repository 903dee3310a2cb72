package dev.locksmith.micrometer;

import dev.locksmith.jobs.ConcurrencyLimits.KeyHeldBack;
import dev.locksmith.jobs.JobQueue;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * The gauge {@code locksmith.jobs.limit.key.held.back} of one queue, tagged {@code key}: one time
 * series per key among the queue's top keys at a limit ({@link
 * dev.locksmith.jobs.ConcurrencyLimits#heldBackByKey}), read at most once per interval. The set of
 * keys changes with each read: a key that joins the top keys gets a gauge, one that left it loses
 * its gauge. Since a key without a gauge has nothing a scrape would read, the read is started by
 * the queue's per-queue limit gauges as well as by these ({@link #refresh}).
 */
final class KeyHeldBackGauges {

    static final String NAME = "locksmith.jobs.limit.key.held.back";

    private final CachedReading<List<KeyHeldBack>> reading;
    private final MultiGauge gauge;
    private final Logger log;
    private volatile Map<String, Integer> shown = Map.of();
    private volatile @Nullable List<KeyHeldBack> registered;
    private boolean closed;

    KeyHeldBackGauges(
            JobQueue jobQueue, String queue, int keys, int cap, Duration interval, MeterRegistry registry, Logger log) {
        this.reading = new CachedReading<>(
                () -> jobQueue.concurrencyLimits().heldBackByKey(queue, keys, cap),
                "the keys of queue " + queue + " that hold back the most jobs",
                interval,
                registry.config().clock(),
                log);
        this.gauge = MultiGauge.builder(NAME)
                .description("Due pending jobs of one key at its concurrency or rate limit, counted up to the cap ("
                        + cap + "), for the " + keys + " keys of the queue holding back the most")
                .tag("queue", queue)
                .register(registry);
        this.log = log;
    }

    /**
     * Reads the top keys when the interval has passed (on this thread), and gives the gauges the
     * keys of a new read. Never throws: a failed read keeps the keys and values of the last one.
     */
    void refresh() {
        List<KeyHeldBack> read = reading.get();
        if (read != null && read != registered) {
            publish();
        }
    }

    /** {@return the held-back jobs of {@code key} as last read, NaN once it left the top keys} */
    private double heldBack(String key) {
        refresh();
        Integer held = shown.get(key);
        return held == null ? Double.NaN : held;
    }

    private synchronized void publish() {
        List<KeyHeldBack> latest = reading.last();
        if (closed || latest == null || latest == registered) {
            return;
        }
        Map<String, Integer> values = new HashMap<>();
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        for (KeyHeldBack key : latest) {
            values.put(key.concurrencyKey(), key.jobsHeldBack());
            rows.add(MultiGauge.Row.of(
                    Tags.of("key", key.concurrencyKey()), this, g -> g.heldBack(key.concurrencyKey())));
        }
        shown = values;
        registered = latest;
        try {
            // not overwritten: a key that stays keeps its gauge, which reads the new value
            gauge.register(rows, false);
        } catch (RuntimeException e) {
            // not tried again before the next read, so that a registry that refuses costs one
            // warning per interval, not one per scrape
            log.warn(
                    "could not register the gauges {} of {} keys; tried again after the next read",
                    NAME,
                    rows.size(),
                    e);
        }
    }

    /** Removes the gauges; no read after this. */
    synchronized void close() {
        closed = true;
        reading.close();
        shown = Map.of();
        gauge.register(List.of(), true);
    }
}

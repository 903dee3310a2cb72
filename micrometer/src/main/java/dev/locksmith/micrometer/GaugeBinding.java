package dev.locksmith.micrometer;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The gauges a binder registered, and its rules: it binds to one registry (again to the same one
 * is a no-op), and once closed its gauges are removed and it binds no more.
 */
final class GaugeBinding {

    private final String binder;
    private @Nullable MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private boolean closed;

    /** @param binder the binder's class name, for messages */
    GaugeBinding(String binder) {
        this.binder = binder;
    }

    /**
     * Claims {@code registry} for this binder.
     *
     * @return true when the caller should register its gauges now, false when they are there already
     * @throws IllegalStateException when closed, or bound to another registry
     */
    synchronized boolean bind(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        if (closed) {
            throw new IllegalStateException(binder + " is closed");
        }
        if (this.registry == registry) {
            return false;
        }
        if (this.registry != null) {
            throw new IllegalStateException(binder
                    + " is bound to another registry already; bind one CompositeMeterRegistry to report to several");
        }
        this.registry = registry;
        return true;
    }

    /** Remembers a gauge registered in the bound registry, to remove it at close. */
    synchronized void add(Meter meter) {
        meters.add(meter);
    }

    /** Removes the gauges from the registry; true the first time. */
    synchronized boolean close() {
        if (closed) {
            return false;
        }
        closed = true;
        MeterRegistry bound = registry;
        if (bound != null) {
            meters.forEach(bound::remove);
        }
        meters.clear();
        return true;
    }
}

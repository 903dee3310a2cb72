package dev.locksmith.jobs.engine;

import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The workers running in this JVM, by queue, for the wake-up signals of enqueues committed in
 * this JVM: a worker here hears of them at once rather than through {@code NOTIFY} and its
 * listener (a round trip, and with PgJDBC a millisecond's wait for a further notification:
 * {@link WakeSignals}). Queues are matched by name alone: a worker of a queue of the same name on
 * another database is woken too, and its claim finds nothing, which costs one statement. Workers
 * in other JVMs still hear of the jobs by {@code NOTIFY}. <b>Internal: not API.</b>
 */
public final class LocalWakeups {

    private static final Logger LOG = LoggerFactory.getLogger(LocalWakeups.class);

    private static final ConcurrentHashMap<String, Set<Runnable>> BY_QUEUE = new ConcurrentHashMap<>();

    private LocalWakeups() {}

    /** A worker's registration; {@link #close()} ends it. */
    public static final class Registration implements AutoCloseable {
        private final String queue;
        private final Runnable wake;

        private Registration(String queue, Runnable wake) {
            this.queue = queue;
            this.wake = wake;
        }

        @Override
        public void close() {
            BY_QUEUE.computeIfPresent(queue, (q, wakes) -> {
                wakes.remove(wake);
                return wakes.isEmpty() ? null : wakes;
            });
        }
    }

    /**
     * Registers a running worker of {@code queue}.
     *
     * @param queue the worker's queue
     * @param wake wakes the worker's idle threads; called on the committing thread, so it must
     *     be quick and must not throw
     * @return the registration, to close when the worker stops
     */
    public static Registration register(String queue, Runnable wake) {
        BY_QUEUE.compute(queue, (q, wakes) -> {
            Set<Runnable> set = wakes != null ? wakes : ConcurrentHashMap.newKeySet();
            set.add(wake);
            return set;
        });
        return new Registration(queue, wake);
    }

    /**
     * Wakes this JVM's workers of {@code queues}, whose jobs just committed.
     *
     * @param queues the queues
     */
    static void wake(Collection<String> queues) {
        for (String queue : queues) {
            Set<Runnable> wakes = BY_QUEUE.get(queue);
            if (wakes == null) {
                continue;
            }
            for (Runnable wake : wakes) {
                try {
                    wake.run();
                } catch (RuntimeException e) {
                    // runs in a producer's after-commit hook: its jobs are committed, and a failure
                    // here must not reach it (the NOTIFY is queued already)
                    LOG.warn(
                            "waking a worker of queue {} in-process failed; it finds the jobs by NOTIFY or poll",
                            queue,
                            e);
                }
            }
        }
    }
}

package dev.locksmith.schedules;

import dev.locksmith.Locksmith;
import dev.locksmith.internal.Durations;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ticks {@link Schedules#runDue()} every {@code tickInterval} on one daemon thread, so that
 * due occurrences become jobs. Run one in every JVM that should be able to schedule: they share
 * the work through row locks, and each occurrence is enqueued once (see {@link Schedules}).
 *
 * <pre>{@code
 * Schedules schedules = new Schedules(dsl);
 * schedules.register(dsl, Schedule.builder("nightly-report", Trigger.cron("0 3 * * *", "Europe/Berlin"),
 *         NewJob.of("reports", "nightly")).build());
 * try (SchedulerWorker scheduler = SchedulerWorker.builder(dsl).build().start()) {
 *     ... // JobWorkers on the "reports" queue run the jobs
 * }
 * }</pre>
 *
 * <p>An occurrence becomes a job at the first tick at or after it: up to one tick interval late
 * (plus the tick's own time). A tick that fails (the database is away) is logged at WARN with its
 * cause, and the next one runs as planned; occurrences due meanwhile follow the schedules'
 * {@link MisfirePolicy}. Each tick needs one connection of the {@code DSLContext}, for its
 * duration.
 */
public final class SchedulerWorker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SchedulerWorker.class);

    private final Schedules schedules;
    private final Duration tickInterval;
    private final ScheduledExecutorService ticker;
    private final AtomicBoolean started = new AtomicBoolean();

    private SchedulerWorker(Builder b) {
        this.schedules = new Schedules(b.dsl, b.config);
        this.tickInterval = b.tickInterval;
        this.ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "locksmith-scheduler");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * A builder for a scheduler whose ticks run in {@code locksmith}'s environment.
     *
     * @param locksmith the environment; each tick takes one of its connections for its duration
     * @return a builder with the defaults: a tick every 5 s, {@link SchedulesConfig#defaults()}
     */
    public static Builder builder(Locksmith locksmith) {
        return builder(Objects.requireNonNull(locksmith, "locksmith").dsl());
    }

    /**
     * A builder for a scheduler whose ticks run on {@code dsl}: its connections, settings (schema
     * mapping) and observer apply.
     *
     * @param dsl the context to tick on; each tick takes one connection for its duration
     * @return a builder with the defaults: a tick every 5 s, {@link SchedulesConfig#defaults()}
     */
    public static Builder builder(DSLContext dsl) {
        return new Builder(dsl);
    }

    /** {@return the schedules this worker ticks, to register and read them} */
    public Schedules schedules() {
        return schedules;
    }

    /** {@return the pause between the end of one tick and the start of the next} */
    public Duration tickInterval() {
        return tickInterval;
    }

    /**
     * Starts ticking: the first tick at once, then one every {@link #tickInterval()} after the
     * previous one ends. Returns at once.
     *
     * @return this worker, running
     * @throws IllegalStateException when it was started before
     */
    // The future is not kept: tick() catches and logs its own failures, and close() stops it
    // through the executor.
    @SuppressWarnings("FutureReturnValueIgnored")
    public SchedulerWorker start() {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("scheduler was already started");
        }
        ticker.scheduleWithFixedDelay(this::tick, 0, tickInterval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    /**
     * Stops ticking; a tick in progress finishes first (its transaction commits or rolls back
     * whole). Returns when the thread has stopped, or after 30 s.
     */
    @Override
    public void close() {
        ticker.shutdown();
        try {
            if (!ticker.awaitTermination(30, TimeUnit.SECONDS)) {
                LOG.warn("a scheduler tick did not finish within 30 s of close(); interrupting it");
                ticker.shutdownNow();
            }
        } catch (InterruptedException e) {
            ticker.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    private void tick() {
        try {
            int enqueued = schedules.runDue();
            if (enqueued > 0) {
                LOG.debug("scheduler tick enqueued {} jobs", enqueued);
            }
        } catch (RuntimeException e) {
            LOG.warn("scheduler tick failed; the next one runs in {}", tickInterval, e);
        }
    }

    /** Builds a {@link SchedulerWorker}; every setting is validated when set, with the field named. */
    public static final class Builder {
        private final DSLContext dsl;
        private Duration tickInterval = Duration.ofSeconds(5);
        private SchedulesConfig config = SchedulesConfig.defaults();

        private Builder(DSLContext dsl) {
            this.dsl = Objects.requireNonNull(dsl, "dsl");
        }

        /**
         * The pause between ticks (default 5 s): how late at most, beyond the tick's own time,
         * an occurrence becomes a job. Each idle tick is one small statement. Keep it well below
         * the {@linkplain SchedulesConfig#misfireGrace() misfire grace}.
         *
         * @param tickInterval at least 1 ms, at most 100 years
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder tickInterval(Duration tickInterval) {
            Durations.positive("tickInterval", tickInterval);
            if (tickInterval.toMillis() < 1) {
                throw new IllegalArgumentException("tickInterval must be at least 1 ms, was " + tickInterval);
            }
            this.tickInterval = tickInterval;
            return this;
        }

        /**
         * The settings of the worker's {@link Schedules} (clock, misfire grace, catch-up cap,
         * batch size, queue settings); default {@link SchedulesConfig#defaults()}.
         *
         * @param config the settings
         * @return this builder
         */
        public Builder config(SchedulesConfig config) {
            this.config = Objects.requireNonNull(config, "config");
            return this;
        }

        /**
         * The worker, not yet started.
         *
         * @return a new worker; call {@link SchedulerWorker#start()}
         */
        public SchedulerWorker build() {
            return new SchedulerWorker(this);
        }
    }
}

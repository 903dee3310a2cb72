package dev.locksmith.spring;

import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.RateLimits;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.Worker;
import dev.locksmith.jobs.WorkerBuilder;
import dev.locksmith.spring.LocksmithProperties.Queue.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs a worker for every {@link LocksmithHandler}, with {@code locksmith.workers.enabled=true}
 * (the default), and the retention of finished jobs when {@code locksmith.retention.completed-after}
 * is set.
 *
 * <p>A {@link SmartLifecycle} in the default phase: the workers start once the context is
 * refreshed (every bean created, the schema migrated before any of them), after the web server,
 * and stop first at shutdown, in parallel, each with its own graceful semantics:
 * a leased worker ({@link JobWorker#close()}) stops claiming, lets running handlers finish within
 * {@code shutdown-grace}, interrupts the rest and gives their jobs back; a transactional worker
 * ({@link TransactionalWorker#close()}) lets each thread's batch commit or roll back within
 * {@code shutdown-grace}, then interrupts it. Spring waits for them up to
 * {@code spring.lifecycle.timeout-per-shutdown-phase} (30 s by default); a worker needs at most
 * twice its {@code shutdown-grace}.
 *
 * <p>Each worker is built from the {@code JobQueue} bean, in the {@code Locksmith} environment on
 * Spring Boot's {@code DSLContext}, so its handler transactions are Spring transactions: code the
 * handler calls that uses Spring's transaction support joins them. Before starting, the
 * connections the workers need are compared with the data source's pool (HikariCP, DBCP 2, Tomcat
 * JDBC): a worker that needs more than the whole pool fails start-up; workers that need more
 * together are logged at WARN. With {@code spring.threads.virtual.enabled=true} (on Java 21+) the
 * handlers run on virtual threads, and each worker runs at most as many at once as the pool leaves
 * it connections for ({@code WorkerBuilder#virtualThreads}) instead.
 */
public final class LocksmithWorkers implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(LocksmithWorkers.class);
    private static final String[] POOL_SIZE_GETTERS = {"getMaximumPoolSize", "getMaxTotal", "getMaxActive"};

    private final BeanFactory beans;
    private final LocksmithHandlers handlers;
    private final LocksmithProperties properties;
    private final JobQueue queue;
    private final javax.sql.DataSource dataSource;
    private final boolean virtualThreads;
    private final Map<String, Mode> modes = new LinkedHashMap<>();

    private final Object lock = new Object();
    private final List<Worker> running = new ArrayList<>();
    private @Nullable ScheduledExecutorService retention;
    private volatile boolean started;

    LocksmithWorkers(
            BeanFactory beans,
            LocksmithHandlers handlers,
            LocksmithProperties properties,
            javax.sql.DataSource dataSource,
            JobQueue queue,
            boolean virtualThreads) {
        this.beans = beans;
        this.virtualThreads = virtualThreads;
        this.handlers = handlers;
        this.properties = properties;
        this.queue = queue;
        this.dataSource = dataSource;
        handlers.byQueue().forEach((name, handler) -> {
            Mode configured = properties.queue(name).mode();
            modes.put(name, configured != null ? configured : handler.batch() ? Mode.TRANSACTIONAL : Mode.LEASED);
        });
        properties.queues().keySet().stream()
                .filter(name -> !modes.containsKey(name))
                .forEach(name -> LOG.warn(
                        "locksmith.queues.{} is configured but no @LocksmithHandler handles queue '{}'; no worker runs"
                                + " for it",
                        name,
                        name));
        if (!virtualThreads) {
            // with virtual threads each worker bounds its handlers by the pool itself
            checkPoolSize(dataSource);
        }
    }

    /** {@return the queues this instance runs a worker for, with their modes, in name order} */
    public Map<String, Mode> queues() {
        return Collections.unmodifiableMap(modes);
    }

    private int connectionsNeeded(String name) {
        LocksmithProperties.Queue settings = properties.queue(name);
        return modes.get(name) == Mode.LEASED
                ? JobWorker.connectionsNeeded(settings.threads(), settings.listen(), settings.claimers())
                : settings.threads() + (settings.listen() ? 1 : 0);
    }

    private void checkPoolSize(javax.sql.DataSource dataSource) {
        Integer maximum = maximumPoolSize(dataSource);
        if (maximum == null || modes.isEmpty()) {
            return;
        }
        int total = 0;
        for (String name : modes.keySet()) {
            int needed = connectionsNeeded(name);
            total += needed;
            if (needed > maximum) {
                LocksmithProperties.Queue settings = properties.queue(name);
                throw new IllegalStateException("locksmith.queues." + name + ": a "
                        + modes.get(name).name().toLowerCase(java.util.Locale.ROOT)
                        + " worker with " + settings.threads() + " threads" + (settings.listen() ? " and LISTEN" : "")
                        + " needs " + needed + " connections at the same time, but the data source allows at most "
                        + maximum
                        + " (spring.datasource.hikari.maximum-pool-size with HikariCP): lower locksmith.queues."
                        + name + ".threads or enlarge the pool");
            }
        }
        if (total > maximum) {
            LOG.warn(
                    "the locksmith workers need {} connections together ({}), but the data source allows at most {}: "
                            + "heartbeats may wait for connections and leases lapse; enlarge the pool or lower threads",
                    total,
                    modes.keySet(),
                    maximum);
        }
    }

    private static @Nullable Integer maximumPoolSize(javax.sql.DataSource dataSource) {
        for (String getter : POOL_SIZE_GETTERS) {
            try {
                java.lang.reflect.Method method = dataSource.getClass().getMethod(getter);
                if (method.getReturnType() == int.class) {
                    int value = (int) method.invoke(dataSource);
                    return value > 0 ? value : null;
                }
            } catch (ReflectiveOperationException | RuntimeException notThisPool) {
                // try the next getter
            }
        }
        return null;
    }

    /**
     * Builds and starts a worker per handler, and the retention task when configured.
     *
     * @throws IllegalStateException when a worker cannot start; those started are closed again
     */
    @Override
    public void start() {
        synchronized (lock) {
            if (started) {
                return;
            }
            try {
                writeLimits();
                handlers.byQueue().forEach(this::startWorker);
            } catch (RuntimeException e) {
                closeAll(new ArrayList<>(running));
                running.clear();
                throw e;
            }
            Duration completedAfter = properties.retention().completedAfter();
            if (completedAfter != null) {
                retention = startRetention(completedAfter);
            }
            started = true;
            LOG.info("started locksmith workers for queues {}", modes);
        }
    }

    /**
     * Writes the configured concurrency and rate limits (locksmith.queues.NAME.concurrency-limit,
     * .concurrency-limits.KEY, .rate-limit, .rate-limits.KEY) to the database, in one transaction,
     * before any worker claims. Limits that are not configured are left as the database has them.
     */
    private void writeLimits() {
        Map<String, LocksmithProperties.Queue> limited = new java.util.TreeMap<>();
        properties.queues().forEach((name, settings) -> {
            if (settings.concurrencyLimit() != null
                    || !settings.concurrencyLimits().isEmpty()
                    || settings.rateLimit() != null
                    || !settings.rateLimits().isEmpty()) {
                limited.put(name, settings);
            }
        });
        if (limited.isEmpty()) {
            return;
        }
        ConcurrencyLimits limits = queue.concurrencyLimits();
        RateLimits rates = queue.rateLimits();
        DSL.using(dataSource, SQLDialect.POSTGRES)
                .transaction(c -> limited.forEach((name, settings) -> {
                    if (settings.concurrencyLimit() != null) {
                        limits.setDefault(c.dsl(), name, settings.concurrencyLimit());
                    }
                    new java.util.TreeMap<>(settings.concurrencyLimits())
                            .forEach((key, limit) -> limits.set(c.dsl(), name, key, limit));
                    // both halves of a rate are there: checked at binding
                    LocksmithProperties.Queue.RateLimit rate = settings.rateLimit();
                    if (rate != null) {
                        rates.setDefault(
                                c.dsl(),
                                name,
                                Objects.requireNonNull(rate.maxStarts()),
                                Objects.requireNonNull(rate.per()));
                    }
                    new java.util.TreeMap<>(settings.rateLimits())
                            .forEach((key, own) -> rates.set(
                                    c.dsl(),
                                    name,
                                    key,
                                    Objects.requireNonNull(own.maxStarts()),
                                    Objects.requireNonNull(own.per())));
                }));
        LOG.info("wrote the configured concurrency and rate limits of queues {}", limited.keySet());
    }

    private void startWorker(String name, HandlerDefinition handler) {
        LocksmithProperties.Queue settings = properties.queue(name);
        Worker worker;
        if (modes.get(name) == Mode.LEASED) {
            JobWorker.Builder builder = common(JobWorker.builder(queue, name, handler.jobHandler(beans)), settings)
                    .lease(settings.lease())
                    .completionLinger(settings.completionLinger())
                    .claimers(settings.claimers());
            if (settings.prefetch() != null) {
                builder.prefetch(settings.prefetch());
            }
            worker = builder.build();
        } else {
            worker = common(TransactionalWorker.builder(queue, name, handler.batchHandler(beans)), settings)
                    .batchSize(settings.batchSize())
                    .build();
        }
        running.add(worker.start());
    }

    /** The settings every worker has, from {@code locksmith.queues.NAME.*}. */
    private <B extends WorkerBuilder<B>> B common(B builder, LocksmithProperties.Queue settings) {
        return builder.threads(settings.threads())
                .virtualThreads(virtualThreads)
                .pollInterval(settings.pollInterval())
                .minPollInterval(settings.minPollInterval())
                .listen(settings.listen())
                .shutdownGrace(settings.shutdownGrace())
                .vacuumInterval(settings.vacuumInterval())
                .horizonWarnAfter(properties.horizon().warnAfter());
    }

    // The future is not kept: the task logs its own failures, and stop() ends it through the executor.
    @SuppressWarnings("FutureReturnValueIgnored")
    private ScheduledExecutorService startRetention(Duration completedAfter) {
        LocksmithProperties.Retention settings = properties.retention();
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "locksmith-retention");
            t.setDaemon(true);
            return t;
        });
        executor.scheduleWithFixedDelay(
                () -> {
                    try {
                        int deleted = queue.deleteFinishedOlderThan(completedAfter, settings.batchSize());
                        LOG.debug("retention deleted {} jobs finished more than {} ago", deleted, completedAfter);
                    } catch (RuntimeException e) {
                        LOG.warn("retention of finished jobs failed; trying again in {}", settings.interval(), e);
                    }
                },
                0,
                settings.interval().toMillis(),
                TimeUnit.MILLISECONDS);
        return executor;
    }

    /** Stops every worker (in parallel) and the retention task; returns when all have stopped. */
    @Override
    public void stop() {
        List<Worker> workers;
        ScheduledExecutorService retentionTask;
        synchronized (lock) {
            if (!started) {
                return;
            }
            started = false;
            workers = new ArrayList<>(running);
            running.clear();
            retentionTask = retention;
            retention = null;
        }
        if (retentionTask != null) {
            retentionTask.shutdownNow();
        }
        closeAll(workers);
        LOG.info("stopped locksmith workers for queues {}", modes.keySet());
    }

    /**
     * Stops as {@link #stop()} does, on a thread of its own, and then runs {@code callback}, so
     * that Spring's shutdown phase timeout applies.
     *
     * @param callback run when every worker has stopped
     */
    @Override
    public void stop(Runnable callback) {
        Thread stopper = new Thread(
                () -> {
                    try {
                        stop();
                    } finally {
                        callback.run();
                    }
                },
                "locksmith-workers-stop");
        stopper.start();
    }

    /** {@return whether the workers run} */
    @Override
    public boolean isRunning() {
        return started;
    }

    private static void closeAll(List<Worker> workers) {
        List<Thread> closers = new ArrayList<>();
        for (Worker worker : workers) {
            Thread closer = new Thread(
                    () -> {
                        try {
                            worker.close();
                        } catch (RuntimeException e) {
                            LOG.warn("a locksmith worker failed to stop", e);
                        }
                    },
                    "locksmith-worker-stop");
            closer.start();
            closers.add(closer);
        }
        for (Thread closer : closers) {
            try {
                closer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}

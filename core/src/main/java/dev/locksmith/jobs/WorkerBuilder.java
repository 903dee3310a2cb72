package dev.locksmith.jobs;

import dev.locksmith.PoolingMode;
import dev.locksmith.internal.Durations;
import dev.locksmith.internal.Environment;
import dev.locksmith.internal.Texts;
import dev.locksmith.internal.VirtualThreads;
import dev.locksmith.jobs.runtime.RuntimeSettings;
import dev.locksmith.jobs.runtime.WorkerRuntime;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.event.Level;

/**
 * The settings every worker has, with the same names, defaults and validation for
 * {@link JobWorker}, {@link TransactionalWorker} and {@link TwoPhaseWorker}; each worker's builder
 * adds its own. The environment (schema, pooling mode, execution mode, observers) and the queue's
 * settings (retry backoff, retention) come from the {@link JobQueue} the worker is built from.
 * Every setter validates its argument, naming the setting.
 *
 * @param <B> the worker's builder
 */
public abstract sealed class WorkerBuilder<B extends WorkerBuilder<B>>
        permits JobWorker.Builder, TransactionalWorker.Builder, TwoPhaseWorker.Builder {

    /** How often a worker looks at the jobs table's dead rows, unless told otherwise. */
    private static final Duration DEFAULT_VACUUM_INTERVAL = Duration.ofSeconds(5);

    /** How long something may hold the MVCC horizon back before a worker logs it, unless told otherwise. */
    private static final Duration DEFAULT_HORIZON_WARN_AFTER = Duration.ofMinutes(5);

    /** How soon a worker without LISTEN polls again after a claim found jobs, unless told otherwise. */
    private static final Duration DEFAULT_MIN_POLL_INTERVAL = Duration.ofMillis(20);

    final JobQueue jobs;
    final String queue;
    private int threads = 4;
    private boolean virtualThreads;
    private Duration pollInterval = Duration.ofSeconds(1);
    private Duration minPollInterval = DEFAULT_MIN_POLL_INTERVAL;
    private boolean listen = true;
    private @Nullable DataSource listenSource;
    private Set<Integer> shards = Set.of();
    private Duration shutdownGrace = Duration.ofSeconds(10);
    private String workerId = defaultWorkerId();
    private Level handlerFailureLogLevel = Level.WARN;
    private Duration vacuumInterval = DEFAULT_VACUUM_INTERVAL;
    private Duration horizonWarnAfter = DEFAULT_HORIZON_WARN_AFTER;

    WorkerBuilder(JobQueue jobs, String queue) {
        this.jobs = Objects.requireNonNull(jobs, "jobs");
        this.queue = Texts.requireName("queue", queue, 128);
        jobs.environment().requireDataSource("a worker");
    }

    abstract B self();

    /**
     * The worker, not yet started: call {@code start()}.
     *
     * @return a new worker
     * @throws IllegalArgumentException for shards out of range, or an environment whose
     *     connections do not come from a {@code DataSource} (a worker holds connections of its own)
     * @throws IllegalStateException for LISTEN wake-ups under {@link PoolingMode#TRANSACTION}
     */
    public abstract Worker build();

    /**
     * Handler threads: how many jobs run at once, each in a transaction of its own (a leased
     * worker holds a few more, claimed ahead for short jobs); default 4.
     *
     * @param threads 1 to 1,000
     * @return this builder
     * @throws IllegalArgumentException when out of range
     */
    public B threads(int threads) {
        this.threads = requireThreads(threads);
        return self();
    }

    /**
     * Run handlers on virtual threads (Java 21 or later; default false). Handlers then cost no
     * platform thread while they wait, and {@link #threads} may be far above the pool's size: the
     * worker runs at most as many handlers at once as its data source (a HikariCP, DBCP 2 or
     * Tomcat JDBC pool, whose size it reads) leaves it connections for, so a thousand virtual
     * threads never wait for a connection; it says so at INFO when it bounds them. With a data
     * source of unknown size, {@code threads} is the bound. {@link #build()} fails before Java 21.
     *
     * @param virtualThreads true for virtual threads
     * @return this builder
     */
    public B virtualThreads(boolean virtualThreads) {
        this.virtualThreads = virtualThreads;
        return self();
    }

    /**
     * Longest idle wait without a notification; default 1 s. Without a LISTEN connection, also the
     * longest delay before a new job is seen once the worker has been idle a while
     * ({@link #minPollInterval}).
     *
     * @param pollInterval positive
     * @return this builder
     * @throws IllegalArgumentException when not positive
     */
    public B pollInterval(Duration pollInterval) {
        this.pollInterval = Durations.positive("pollInterval", pollInterval);
        return self();
    }

    /**
     * How often a worker without a LISTEN connection (LISTEN off, or its connection down) polls
     * while jobs arrive; default 20 ms. While a claim found jobs within the last second, one idle
     * thread of the worker claims every this often for all of them (at most one empty claim per
     * this interval, a worker's cost of picking jobs up within about it); after that each poll
     * that finds none doubles the wait, up to {@link #pollInterval}, where an idle worker settles
     * within a few seconds. Ignored while LISTEN is up. A value at or above the poll interval turns
     * the adaptive poll off.
     *
     * @param minPollInterval positive
     * @return this builder
     * @throws IllegalArgumentException when not positive
     */
    public B minPollInterval(Duration minPollInterval) {
        this.minPollInterval = Durations.positive("minPollInterval", minPollInterval);
        return self();
    }

    /**
     * Use LISTEN/NOTIFY wake-up (default true): idle threads wake when a job is enqueued, at the
     * cost of one more connection held for the worker's life. Refused under
     * {@link PoolingMode#TRANSACTION}, where LISTEN cannot work: there use
     * {@link #listenVia(DataSource)}, or rely on the adaptive poll ({@link #minPollInterval}).
     *
     * @param listen false to rely on polling alone
     * @return this builder
     */
    public B listen(boolean listen) {
        this.listen = listen;
        this.listenSource = null;
        return self();
    }

    /**
     * LISTEN on a connection from {@code direct}, a data source that reaches the server itself
     * (not through a pooler in transaction mode), while every other statement of the worker uses
     * the queue's connections: wake-ups for a worker whose queue is behind PgBouncer. The
     * connection is held for the worker's life and not counted against the queue's pool.
     *
     * @param direct a data source connecting to the same database directly
     * @return this builder
     */
    public B listenVia(DataSource direct) {
        this.listenSource = Objects.requireNonNull(direct, "direct");
        this.listen = true;
        return self();
    }

    /**
     * Claim only from these shards; default all.
     *
     * @param shards shard numbers, none negative; empty means all (checked by {@link #build()})
     * @return this builder
     */
    public B shards(Set<Integer> shards) {
        this.shards = Set.copyOf(Objects.requireNonNull(shards, "shards"));
        return self();
    }

    /**
     * How long {@code close()} lets jobs in hand finish before interrupting their handlers, and
     * as long again after the interrupt; default 10 s. A two-phase worker's side effects are not
     * interrupted.
     *
     * @param shutdownGrace positive
     * @return this builder
     * @throws IllegalArgumentException when not positive
     */
    public B shutdownGrace(Duration shutdownGrace) {
        this.shutdownGrace = Durations.positive("shutdownGrace", shutdownGrace);
        return self();
    }

    /**
     * The worker's id, in logs and written to {@code locked_by} of the jobs a leased worker holds;
     * default {@code <pid>@<host>-<random>}. Unique per worker, so that an operator can tell whose
     * lease a job is under.
     *
     * @param workerId 1 to 128 characters, not blank
     * @return this builder
     * @throws IllegalArgumentException when blank, too long, or not storable text
     */
    public B workerId(String workerId) {
        this.workerId = Texts.requireName("workerId", workerId, 128);
        return self();
    }

    /**
     * The level at which a failed attempt is logged, with its stack trace, when the job will be
     * retried (default {@link Level#WARN}). A job that fails for good is logged at ERROR whatever
     * this says; a failure after the lease was lost at WARN.
     *
     * @param level an SLF4J level
     * @return this builder
     */
    public B handlerFailureLogLevel(Level level) {
        this.handlerFailureLogLevel = Objects.requireNonNull(level, "handlerFailureLogLevel");
        return self();
    }

    /**
     * How often the worker looks at the jobs table's dead rows, and VACUUMs the table when there
     * are 10,000 or more; default 5 s. Every claim leaves a dead row, and autovacuum visits a
     * database only once a minute by default (or never, where it is off), so a busy queue slows
     * down as its claims step over dead rows; this keeps it fast. The VACUUM ({@code SKIP_LOCKED}:
     * skipped while another one runs; no truncation, whose exclusive lock claims would wait for)
     * runs on one of the worker's threads between its jobs, on the connection that thread would
     * use, and needs the worker's role to own the table (otherwise the worker logs it once and
     * stops trying) and connections that auto-commit.
     *
     * @param interval {@link Duration#ZERO} to leave vacuum to autovacuum or your own schedule,
     *     else 1 s to 1 hour
     * @return this builder
     * @throws IllegalArgumentException when out of range
     */
    public B vacuumInterval(Duration interval) {
        Objects.requireNonNull(interval, "vacuumInterval");
        if (!interval.isZero()
                && (interval.compareTo(Duration.ofSeconds(1)) < 0 || interval.compareTo(Duration.ofHours(1)) > 0)) {
            throw new IllegalArgumentException(
                    "vacuumInterval must be zero (off) or between 1 s and 1 h, was " + interval);
        }
        this.vacuumInterval = interval;
        return self();
    }

    /**
     * How long something may hold the database's MVCC horizon back before the worker logs it at
     * WARN, once per holder; default 5 minutes. While a session's transaction, a replication slot,
     * a prepared transaction or a standby's feedback holds it, no VACUUM removes the rows the queue
     * deleted or updated since, and claims slow down as they step over them
     * ({@link dev.locksmith.audit.HorizonReport} says who holds it). The worker reads the holders
     * with one statement at most every fifth of this (between 1 s and 1 minute), on one of its
     * threads between jobs, as it checks for vacuum; the line names the holder (pid, application,
     * state, query; the slot or the prepared transaction), how long and how many transactions it
     * has held the horizon, and what to do about it. Each holder is logged once per JVM, however
     * many workers see it.
     *
     * @param threshold {@link Duration#ZERO} to turn the check off, else 1 s to 1 day
     * @return this builder
     * @throws IllegalArgumentException when out of range
     */
    public B horizonWarnAfter(Duration threshold) {
        Objects.requireNonNull(threshold, "horizonWarnAfter");
        if (!threshold.isZero()
                && (threshold.compareTo(Duration.ofSeconds(1)) < 0 || threshold.compareTo(Duration.ofDays(1)) > 0)) {
            throw new IllegalArgumentException(
                    "horizonWarnAfter must be zero (off) or between 1 s and 1 day, was " + threshold);
        }
        this.horizonWarnAfter = threshold;
        return self();
    }

    /** The worker id set so far. */
    String workerId() {
        return workerId;
    }

    /** The environment of the queue the worker is built from. */
    Environment environment() {
        return jobs.environment();
    }

    /**
     * The runtime of a worker with these settings, checked against the environment: LISTEN needs
     * one server session per connection, and the worker needs connections of its own.
     *
     * @param log the worker's logger
     * @param beside connections the worker's mode holds beside one per handler and LISTEN's
     */
    WorkerRuntime runtime(Logger log, int beside) {
        Environment environment = environment();
        if (virtualThreads) {
            VirtualThreads.require("virtualThreads(true)");
        }
        DataSource dataSource = environment.requireDataSource("a worker");
        boolean listensOnPool = listen && listenSource == null;
        int handlers = WorkerRuntime.handlerThreads(
                dataSource, threads, beside + (listensOnPool ? 1 : 0), virtualThreads, log, queue);
        if (listen && listenSource == null) {
            environment
                    .poolingMode()
                    .requireSessionState(
                            "LISTEN wake-up",
                            "LISTEN on a direct connection with listenVia(DataSource), "
                                    + "or set listen(false) and rely on the adaptive poll");
        }
        new Claim(queue, 1, shards); // checks the shards
        RuntimeSettings settings = new RuntimeSettings(
                queue,
                handlers,
                virtualThreads,
                pollInterval,
                minPollInterval,
                listen,
                listenSource,
                shards,
                shutdownGrace,
                workerId,
                handlerFailureLogLevel,
                vacuumInterval,
                horizonWarnAfter,
                log);
        return new WorkerRuntime(jobs.engine(), dataSource, settings);
    }

    /** A worker's thread count: 1 to 1,000. */
    static int requireThreads(int threads) {
        if (threads < 1 || threads > 1000) {
            throw new IllegalArgumentException("threads must be between 1 and 1000, was " + threads);
        }
        return threads;
    }

    private static String defaultWorkerId() {
        String host = ManagementFactory.getRuntimeMXBean().getName();
        return host + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}

package dev.locksmith.jobs;

import dev.locksmith.Locksmith;
import dev.locksmith.internal.Durations;
import dev.locksmith.jobs.runtime.LeasedMode;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link JobHandler} for the jobs of one queue on N threads, in leased mode: at least once,
 * for work with side effects outside the database (make them idempotent).
 *
 * <ul>
 *   <li>A claimer thread claims, in one statement per batch, as many jobs as there are free
 *       handler threads, plus for short jobs a few ahead: as many as the threads end in about
 *       100 ms, at most {@link Builder#prefetch} (default eight per thread, more while claim
 *       statements are slow). A worker whose jobs take a second or more so holds only jobs it
 *       can start; {@code prefetch(0)} makes that so for every job. {@link Builder#claimers}
 *       lets several claim statements run at once, for workers of many short jobs. A handler
 *       thread that ends its job while no job claimed ahead waits for a thread makes the next
 *       claim itself, in a claimer's place, and runs the first job found, so that a job
 *       committed meanwhile starts as that claim returns.</li>
 *   <li>When the queue is empty it waits for a {@code NOTIFY locksmith_jobs} (sent by
 *       {@link JobQueue#enqueueAll} on commit) on a dedicated LISTEN connection, and polls every
 *       {@code pollInterval} regardless. Behind PgBouncer in transaction pooling mode LISTEN does
 *       not work (notifications go to whichever session the pooler picked); build the queue in an
 *       environment with {@code PoolingMode.TRANSACTION} (which refuses LISTEN) and set
 *       {@code listen(false)}, or give the worker a direct connection.</li>
 *   <li>Each job runs in a transaction ({@link JobHandler}). When the handler wrote in it, the
 *       same transaction completes the job, so the writes commit only with the completion; when
 *       it wrote nothing (no transaction id was assigned), the transaction commits and the job
 *       joins the next batch of completions: one auto-committed statement for every job whose
 *       handler ended meanwhile ({@link Builder#completionLinger}), its lease heartbeated until
 *       then. A handler exception fails the job with backoff. All held leases are extended in
 *       one statement every third of the lease; expired leases of crashed workers are rescued
 *       every {@code rescueInterval}.</li>
 *   <li>Jobs with an {@linkplain NewJob.Builder#orderingKey(String) ordering key} run one at a
 *       time per key, in enqueue order, across all workers ({@link JobQueue}, "Per-key
 *       ordering"): a claim takes only the head of each key, and the next job of a key becomes
 *       claimable when its predecessor's completing transaction commits, after which the worker
 *       that ran it claims again at once.</li>
 *   <li>{@link #close()} stops claiming, lets running handlers finish within the shutdown grace,
 *       then interrupts the rest and waits as long again; it sends the last completions and gives
 *       back ({@code pending}, attempt not counted) the jobs claimed ahead and those whose
 *       handlers were interrupted. A handler that ignores its interrupt keeps its job: no other
 *       worker may run it while it still runs. {@code close()} then returns, logs the job at WARN
 *       and counts the thread in {@link #liveThreads()}; the job's lease goes on being
 *       heartbeated until the handler ends, and the handler's end settles it (completed when it
 *       returned, given back when it threw); if the JVM exits first, the lease expires and the job
 *       is rescued.</li>
 * </ul>
 *
 * <p><b>Connections.</b> A worker with {@code threads} handler threads needs
 * {@code threads + 4} connections from its data source at the same time
 * ({@link #connectionsNeeded(int, boolean)}): one per running handler transaction, one for
 * claims (one per claimer, {@link #connectionsNeeded(int, boolean, int)}), one for batched
 * completions (and the table's vacuum, {@link WorkerBuilder#vacuumInterval}), one for heartbeats
 * and rescue, and one held for {@code LISTEN} ({@code threads + 3} with {@code listen(false)}).
 * With fewer, heartbeats wait for a connection while handlers hold them all, leases lapse, and
 * jobs run twice. {@link #start()} fails when the data source is a pool whose maximum size it
 * can read (HikariCP, Apache DBCP 2, Tomcat JDBC) and that maximum is too small; a pool shared
 * with the application needs room for both. Each lost lease is logged at WARN.
 */
public final class JobWorker extends RuntimeWorker {

    private static final Logger LOG = LoggerFactory.getLogger(JobWorker.class);
    /** The most claim statements a worker runs at once ({@link Builder#claimers}). */
    public static final int MAX_CLAIMERS = 8;

    private final LeasedMode mode;

    private JobWorker(Builder b) {
        super(b, b.runtime(LOG, b.claimers + 2));
        this.mode = new LeasedMode(runtime, b.handler, b.lease, b.rescueInterval, b.prefetch, b.claimers, b.linger);
    }

    /**
     * A builder for a worker on {@code queue} of {@code jobs}, in its environment and with its
     * settings (retry backoff, retention).
     *
     * @param jobs the queue: its environment's data source gives the worker's connections, which
     *     must allow {@link #connectionsNeeded(int, boolean, int)} at once
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the work for each job, called on the worker's handler threads
     * @return a builder with the defaults: 4 threads, 30 s lease, 1 s poll, rescue every 30 s,
     *     10 s shutdown grace, LISTEN on
     * @throws IllegalArgumentException for an invalid queue name, or an environment whose connections
     *     do not come from a {@code DataSource} (a worker holds connections of its own)
     */
    public static Builder builder(JobQueue jobs, String queue, JobHandler handler) {
        return new Builder(jobs, queue, handler);
    }

    /**
     * A builder for a worker with every default environment and queue setting, its connections
     * from {@code dataSource}: {@code builder(new JobQueue(Locksmith.of(dataSource)), queue,
     * handler)}.
     *
     * @param dataSource connections for claims, handler transactions and (one, held) LISTEN
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the work for each job
     * @return a builder with the defaults of {@link #builder(JobQueue, String, JobHandler)}
     * @throws IllegalArgumentException for an invalid queue name, or an environment whose connections
     *     do not come from a {@code DataSource} (a worker holds connections of its own)
     */
    public static Builder builder(DataSource dataSource, String queue, JobHandler handler) {
        return builder(new JobQueue(Locksmith.of(dataSource)), queue, handler);
    }

    /**
     * A builder for a worker whose transactions run on {@code dsl}, with every default queue
     * setting: {@code builder(new JobQueue(dsl), queue, handler)}. Your jOOQ configuration
     * ({@code Settings}, {@code ExecuteListener}s, transaction provider such as Spring's) applies
     * to its claims, completions and the handler's transaction; the connections it holds come from
     * the data source behind the context's {@code DataSourceConnectionProvider}.
     *
     * @param dsl your context, or {@link Locksmith#dsl()}
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the work for each job
     * @return a builder with the defaults of {@link #builder(JobQueue, String, JobHandler)}
     * @throws IllegalArgumentException for an invalid queue name, or an environment whose connections
     *     do not come from a {@code DataSource} (a worker holds connections of its own)
     */
    public static Builder builder(DSLContext dsl, String queue, JobHandler handler) {
        return builder(new JobQueue(dsl), queue, handler);
    }

    /**
     * Connections a worker with one claimer needs at the same time: {@code threads + 4}, or
     * {@code threads + 3} without {@code LISTEN} (see the class description).
     *
     * @param threads handler threads, 1 to 1,000
     * @param listen whether the worker uses LISTEN
     * @return the smallest pool size the worker can run on without losing leases
     * @throws IllegalArgumentException when {@code threads} is out of range
     */
    public static int connectionsNeeded(int threads, boolean listen) {
        return connectionsNeeded(threads, listen, 1);
    }

    /**
     * Connections a worker needs at the same time: {@code threads + claimers + 3}, or
     * {@code threads + claimers + 2} without {@code LISTEN} (see the class description).
     *
     * @param threads handler threads, 1 to 1,000
     * @param listen whether the worker uses LISTEN
     * @param claimers claim statements at once ({@link Builder#claimers}), 1 to
     *     {@value #MAX_CLAIMERS}
     * @return the smallest pool size the worker can run on without losing leases
     * @throws IllegalArgumentException when {@code threads} or {@code claimers} is out of range
     */
    public static int connectionsNeeded(int threads, boolean listen, int claimers) {
        return LeasedMode.connectionsNeeded(WorkerBuilder.requireThreads(threads), listen, requireClaimers(claimers));
    }

    private static int requireClaimers(int claimers) {
        if (claimers < 1 || claimers > MAX_CLAIMERS) {
            throw new IllegalArgumentException("claimers must be between 1 and " + MAX_CLAIMERS + ", was " + claimers);
        }
        return claimers;
    }

    /**
     * Starts the claimers, the completer, LISTEN, heartbeats and rescue; returns at once.
     *
     * @return this worker, running
     * @throws IllegalStateException when the data source's pool is known to allow fewer
     *     connections than {@link #connectionsNeeded(int, boolean, int)}, or when it was started
     *     before
     */
    @Override
    public JobWorker start() {
        runtime.start(mode);
        return this;
    }

    /** Builds a {@link JobWorker}: the settings of {@link WorkerBuilder}, and those of leased mode. */
    public static final class Builder extends WorkerBuilder<Builder> {
        private final JobHandler handler;
        private Duration lease = Duration.ofSeconds(30);
        private Duration rescueInterval = Duration.ofSeconds(30);
        private @Nullable Integer prefetch;
        private int claimers = 1;
        private Duration linger = Duration.ZERO;

        private Builder(JobQueue jobs, String queue, JobHandler handler) {
            super(jobs, queue);
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        @Override
        Builder self() {
            return this;
        }

        /**
         * Lease per claimed job, extended every third of it while the handler runs; default
         * 30 s. A crashed worker's jobs run again elsewhere once it expires (and the next rescue
         * runs), so shorter leases mean faster recovery and more heartbeat statements.
         *
         * @param lease positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder lease(Duration lease) {
            this.lease = Durations.positive("lease", lease);
            return this;
        }

        /**
         * How often this worker rescues expired leases ({@link JobQueue#rescueExpired()}: every
         * queue's, not only its own); default 30 s.
         *
         * @param rescueInterval positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder rescueInterval(Duration rescueInterval) {
            this.rescueInterval = Durations.positive("rescueInterval", rescueInterval);
            return this;
        }

        /**
         * The most jobs claimed ahead of free threads; default eight per thread, growing while
         * claim statements are slow. A thread that ends a job then starts the next without
         * waiting for a claim, and claims are larger: for short jobs the worker runs several
         * times faster. The worker claims ahead only as many jobs as its threads end in about
         * 100 ms at the average run so far (none before the first has ended), so that a job
         * claimed ahead waits about that long for a thread and a worker whose jobs take a second
         * or more claims only for its free threads. Jobs claimed ahead hold leases (heartbeated)
         * that other workers cannot take meanwhile; {@link JobWorker#close()} gives back those
         * not started.
         *
         * <p>Unset, the limit grows while claim statements take 5 ms or more on average: to as
         * many jobs as the threads end during two claims (and the 100 ms to two claims), at most
         * 1,000. While another session holds the MVCC horizon, every claim steps over the index
         * entries of every job claimed since, which no VACUUM can remove, so claims slow from a
         * millisecond to tens, and a worker that claimed at most eight per thread at a time fell
         * behind at 1,000 jobs/s where it now keeps up. A job claimed ahead so waits no longer
         * for a thread than it would have waited for the next claim. While claims are quick it
         * stays eight per thread, so that a run the average mispredicts (a long job after many
         * short ones) holds few jobs from other workers. Set, the limit is fixed.
         *
         * @param prefetch 0 (claim only for free threads) to 1,000
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder prefetch(int prefetch) {
            if (prefetch < 0 || prefetch > 1000) {
                throw new IllegalArgumentException("prefetch must be between 0 and 1000, was " + prefetch);
            }
            this.prefetch = prefetch;
            return this;
        }

        /**
         * Claim statements the worker may run at once, each on a connection of its own; default
         * 1. A claim of hundreds of jobs takes tens of milliseconds on the server, and one
         * claimer waits for each before it sends the next, so a worker of short jobs with a
         * large {@link #prefetch} can run jobs faster than one claimer leases them. With more,
         * the jobs the worker may hold (its threads and those claimed ahead) are split between
         * claims that run side by side; they never hold more together than one would.
         * {@link JobWorker#connectionsNeeded(int, boolean, int)} grows by one per claimer.
         *
         * @param claimers 1 to {@value JobWorker#MAX_CLAIMERS}
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder claimers(int claimers) {
            this.claimers = requireClaimers(claimers);
            return this;
        }

        /**
         * How long the completion of a job whose handler wrote nothing may wait for others to be
         * completed with it in one statement; default zero: a batch is whatever ended while the
         * previous one was being sent, which costs no latency at low load. A batch holds at most
         * 1,000 jobs, and the worker claims no more while 1,000 (or ten per thread, if more) wait
         * for their completion. The jobs' leases are kept (heartbeated) until their batch commits;
         * if the worker dies first, they run again once their leases expire, as they would if it
         * died while they ran.
         *
         * @param linger zero or positive, at most one second
         * @return this builder
         * @throws IllegalArgumentException when negative or above one second
         */
        public Builder completionLinger(Duration linger) {
            Objects.requireNonNull(linger, "completionLinger");
            if (linger.isNegative() || linger.compareTo(Duration.ofSeconds(1)) > 0) {
                throw new IllegalArgumentException("completionLinger must be between 0 and 1 s, was " + linger);
            }
            this.linger = linger;
            return this;
        }

        /**
         * The worker, not yet started.
         *
         * @return a new worker; call {@link JobWorker#start()}
         * @throws IllegalArgumentException for shards out of range, or an environment whose
         *     connections do not come from a {@code DataSource}
         * @throws IllegalStateException for LISTEN wake-ups under {@code PoolingMode.TRANSACTION}
         */
        @Override
        public JobWorker build() {
            return new JobWorker(this);
        }
    }
}

package dev.locksmith.jobs;

import dev.locksmith.PoolingMode;
import dev.locksmith.internal.CheckedFailure;
import dev.locksmith.internal.Observing;
import dev.locksmith.internal.Savepoints;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Runs a {@link BatchJobHandler} in transactional mode: each of N threads repeatedly opens a
 * transaction, claims up to {@code batchSize} jobs with
 * {@link JobQueue#claimInTransaction(DSLContext, Claim)}, hands them to the handler, and commits.
 * Exactly once for work done in the same database; no leases, heartbeats or rescue are needed,
 * because a crashed worker's transaction simply rolls back.
 *
 * <p>Batching is the throughput lever: one round trip claims many jobs, and a batch commits as a
 * whole. When the handler throws, the batch's transaction rolls back (every job is back in the
 * queue, nothing of the handler's work remains) and the thread then <em>isolates</em> jobs: it
 * claims its next batches as usual but hands the handler one job at a time, each under a
 * savepoint. A job whose handler throws there is rolled back to its savepoint and written back
 * with {@code attempts + 1}, the error in {@code last_error} and a {@code run_at} after the
 * retry backoff ({@link JobQueueConfig#retryBackoff()}), or as {@code failed} once it has used
 * {@code max_attempts}; the rest of the batch commits. The thread returns to whole batches after
 * a batch with no failure. So a poison job costs each thread that meets it one rolled-back batch
 * per attempt, is retried with backoff, and ends {@code failed}. {@link Builder#isolateEachJob}
 * isolates every batch (two extra round trips per job: {@code SAVEPOINT} and
 * {@code RELEASE SAVEPOINT}).
 *
 * <p>A handler that throws a {@link JobControl} (snooze, retry after a delay, fail permanently,
 * cancel) takes the same path: when it was handed one job under a savepoint, the job is written
 * back as the control asks; when it was handed a whole batch, the batch rolls back (logged at
 * DEBUG, not as a failure) and the thread isolates jobs, so that the handler meets the job again
 * alone and the control applies to it. A handler that often snoozes or cancels jobs is best run
 * with {@link Builder#isolateEachJob} or a batch size of one, to spare those rolled-back batches.
 *
 * <p>Jobs with an {@linkplain NewJob.Builder#orderingKey(String) ordering key} are claimed only
 * as the head of their key ({@link JobQueue}, "Per-key ordering"), so a batch holds at most one
 * job per key, and the next job of a key becomes claimable when the batch that holds its
 * predecessor commits; a thread whose batch held keyed jobs therefore claims again at once
 * instead of waiting for a notification.
 *
 * <p>Each thread holds one connection while it works; with {@code listen} on, one more is held
 * for {@code LISTEN}: the data source must allow {@code threads + 1} connections.
 *
 * <p>Every few seconds one thread, between its batches, looks at the jobs table's dead rows and
 * vacuums it when there are many ({@link Builder#vacuumInterval}).
 *
 * <p>A thread survives anything the handler throws, {@link Error}s included; a failure of the
 * worker's own loop is logged at ERROR, and {@link #liveThreads()} tells how many threads still
 * run. Idle threads wait for a NOTIFY, and poll regardless.
 */
public final class TransactionalWorker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionalWorker.class);

    private final DataSource dataSource;
    private final DSLContext dsl;
    private final JobQueue queue;
    private final Claim claim;
    private final BatchJobHandler handler;
    private final Duration pollInterval;
    private final QueueNotifications notifications;
    private final boolean listen;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicLong processed = new AtomicLong();
    private final java.util.concurrent.atomic.AtomicInteger live = new java.util.concurrent.atomic.AtomicInteger();
    private final boolean isolateEachJob;
    private final Level handlerFailureLogLevel;
    private final Observing observing;
    private final QueueVacuum vacuum;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wakeUp = lock.newCondition();
    private long wakeGeneration;

    private TransactionalWorker(Builder b) {
        this.dataSource = b.connections.dataSource();
        this.dsl = dev.locksmith.TableSchema.using(b.connections.dsl(), b.schema);
        this.queue = new JobQueue(
                dsl, b.queueConfig.toBuilder().notifyOnEnqueue(false).build());
        this.isolateEachJob = b.isolateEachJob;
        this.handlerFailureLogLevel = b.handlerFailureLogLevel;
        this.observing = Observing.of(dsl);
        this.claim = new Claim(b.queue, b.batchSize, b.shards);
        this.handler = b.handler;
        this.pollInterval = b.pollInterval;
        this.vacuum = new QueueVacuum(queue, b.queue, b.vacuumInterval, LOG);
        this.listen = b.listen;
        this.notifications =
                new QueueNotifications(b.connections.dataSource(), b.queue, b.pollInterval, () -> {}, this::wakeAll);
        for (int i = 0; i < b.threads; i++) {
            Thread t = new Thread(this::loop, "locksmith-" + b.queue + "-tx-" + i);
            t.setDaemon(true);
            t.setUncaughtExceptionHandler(
                    (thread, e) -> LOG.error("worker thread {} of queue {} died", thread.getName(), claim.queue(), e));
            threads.add(t);
        }
    }

    /**
     * A builder for a worker on {@code queue} running {@code handler}.
     *
     * @param dataSource where each thread's connection (and the LISTEN connection) comes from;
     *     must allow {@code threads + 1} connections
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the work for each batch, called on the worker's threads
     * @return a builder with the defaults: 4 threads, batches of 10, 1 s poll, LISTEN on
     * @throws IllegalArgumentException for an invalid queue name
     */
    public static Builder builder(DataSource dataSource, String queue, BatchJobHandler handler) {
        return new Builder(WorkerConnections.of(dataSource), queue, handler);
    }

    /**
     * A builder for a worker whose transactions run on {@code dsl}: the worker derives its own
     * context from your jOOQ configuration, so your {@code Settings}, {@code ExecuteListener}s
     * and transaction provider (Spring's, for instance) apply to its claims, completions and the
     * handler's transaction. The connections it holds (one per thread while a transaction runs,
     * and one for {@code LISTEN}) come from the data source behind the context's
     * {@code DataSourceConnectionProvider}.
     *
     * @param dsl your context; its connection provider must be a
     *     {@link org.jooq.impl.DataSourceConnectionProvider}
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the work, called on the worker's threads
     * @return a builder with the same defaults as {@link #builder(DataSource, String, BatchJobHandler)}
     * @throws IllegalArgumentException for an invalid queue name, or a context whose connections
     *     do not come from a data source
     */
    public static Builder builder(DSLContext dsl, String queue, BatchJobHandler handler) {
        return new Builder(WorkerConnections.of(dsl), queue, handler);
    }

    /**
     * Starts the threads; returns at once.
     *
     * @return this worker, running
     * @throws IllegalStateException when the data source's pool is known to allow fewer than
     *     {@code threads + 1} connections ({@code threads} without LISTEN), or when it was
     *     started before
     */
    public TransactionalWorker start() {
        PoolSize.require(dataSource, threads.size() + (listen ? 1 : 0), "transactional worker", threads.size(), listen);
        if (!running.compareAndSet(false, true)) {
            throw new IllegalStateException("already started");
        }
        JobQueue.warnIfNotVacuumed(queue, LOG);
        if (listen) {
            notifications.start();
        }
        threads.forEach(Thread::start);
        return this;
    }

    /** {@return jobs whose batch committed so far, failed attempts written back included} */
    public long processed() {
        return processed.get();
    }

    /**
     * Threads running their loop now: the configured count while the worker runs, fewer only if
     * a thread died of a failure outside the handler (logged at ERROR); zero after
     * {@link #close()}.
     *
     * @return how many of the worker's threads are in their loop
     */
    public int liveThreads() {
        return live.get();
    }

    /** Stops after each thread's current batch commits or rolls back; returns when all have stopped. */
    @Override
    public void close() {
        if (!running.compareAndSet(true, false)) {
            return;
        }
        wakeAll();
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (listen) {
            notifications.stop();
        }
    }

    private void loop() {
        live.incrementAndGet();
        try {
            boolean isolate = isolateEachJob;
            while (running.get()) {
                Batch batch = new Batch();
                try {
                    boolean isolating = isolate;
                    dsl.transaction(c -> batch.run(c.dsl(), isolating));
                    batch.handled.forEach(job -> observing.jobEvent(JobEvent.COMPLETED, job));
                    isolate = isolateEachJob || batch.failures > 0;
                } catch (Throwable e) {
                    JobControl control = JobControl.find(e);
                    if (!batch.claimDone) {
                        // nothing was claimed (the database or, on Citus, a worker node is
                        // unreachable): nothing to isolate, try again after the poll interval
                        LOG.warn("claiming from queue {} failed, retrying after the poll interval", claim.queue(), e);
                    } else if (control != null && !isolate) {
                        // A decision for one job of the batch: no error, but the batch must run
                        // again one job at a time for the control to reach that job alone.
                        LOG.debug(
                                "batch of {} jobs on queue {} rolled back: its handler threw {} for one of them; "
                                        + "isolating jobs",
                                batch.claimed,
                                claim.queue(),
                                control.getMessage());
                    } else {
                        LOG.warn(
                                "batch of {} jobs on queue {} rolled back, its jobs are back in the queue{}",
                                batch.claimed,
                                claim.queue(),
                                isolate ? "" : "; isolating jobs from now on",
                                e);
                    }
                    isolate = isolate || batch.claimDone;
                    batch.claimed = 0;
                    batch.keyed = false;
                }
                processed.addAndGet(batch.claimed);
                if (running.get()) {
                    vacuum.runIfDue();
                }
                // A committed keyed job makes the next job of its key claimable, and no NOTIFY
                // says so: claim again at once rather than after the poll interval.
                // On Citus a claim takes its jobs from one shard: a partial batch says nothing of
                // the other shards, so only an empty one (every shard tried) waits.
                if (batch.claimed < claim.limit() && !batch.keyed && (batch.claimed == 0 || !distributed())) {
                    awaitWake();
                }
            }
        } finally {
            live.decrementAndGet();
        }
    }

    private boolean distributed() {
        return queue.distributedShards(dsl) > 0;
    }

    /** One transaction's worth of jobs. */
    private final class Batch {
        /** Whether the claim statement returned (else it failed, and nothing was claimed). */
        boolean claimDone;

        int claimed;
        /** Whether a claimed job had an ordering key. */
        boolean keyed;

        int failures;
        /** Jobs whose handler succeeded: completed when the transaction commits. */
        final List<Job> handled = new ArrayList<>();

        void run(DSLContext tx, boolean isolating) throws Exception {
            List<Job> jobs = queue.claimInTransaction(tx, claim);
            claimDone = true;
            claimed = jobs.size();
            keyed = jobs.stream().anyMatch(job -> job.orderingKey() != null);
            if (jobs.isEmpty()) {
                return;
            }
            if (!isolating) {
                Observation handling = observing.start(new Operation.HandleJobs(jobs));
                try {
                    handler.handle(jobs, tx);
                } catch (Exception | Error e) {
                    handling.error(e);
                    throw e;
                }
                handling.end(Outcome.OK);
                handled.addAll(jobs);
                return;
            }
            for (Job job : jobs) {
                int attempt = job.attempts() + 1;
                JobLogging.Scope mdc = JobLogging.mdc(job, attempt);
                Observation handling = observing.start(new Operation.HandleJobs(List.of(job)));
                try {
                    Savepoints.unit(tx, () -> {
                        try {
                            handler.handle(List.of(job), tx);
                        } catch (RuntimeException | Error e) {
                            throw e;
                        } catch (Exception checked) {
                            throw new CheckedFailure(checked);
                        }
                        return null;
                    });
                    handling.end(Outcome.OK);
                    handled.add(job);
                } catch (RuntimeException | Error e) {
                    Throwable cause = e instanceof CheckedFailure wrapped ? wrapped.checked() : e;
                    JobControl control = JobControl.find(cause);
                    failures++;
                    // Requeued while the handler's observation is still open, as JobWorker records
                    // a failure: the requeue's span (locksmith.job.fail) is part of the job's.
                    FailResult result = null;
                    try {
                        result = control == null
                                ? queue.requeueFailed(tx, job, JobLogging.describe(cause))
                                : queue.requeue(tx, job, control);
                        JobLogging.handlerFailed(LOG, handlerFailureLogLevel, job, attempt, cause, result);
                    } finally {
                        JobWorker.endHandling(handling, cause, result);
                    }
                } finally {
                    mdc.close();
                }
            }
        }
    }

    private void wakeAll() {
        lock.lock();
        try {
            wakeGeneration++;
            wakeUp.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void awaitWake() {
        lock.lock();
        try {
            long generation = wakeGeneration;
            long nanos = pollInterval.toNanos();
            while (generation == wakeGeneration && running.get() && nanos > 0) {
                nanos = wakeUp.awaitNanos(nanos);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    /** Builds a {@link TransactionalWorker}; settings are validated when set. */
    public static final class Builder {
        private final WorkerConnections connections;
        private final String queue;
        private final BatchJobHandler handler;
        private int threads = 4;
        private int batchSize = 10;
        private Duration pollInterval = Duration.ofSeconds(1);
        private boolean listen = true;
        private String schema = dev.locksmith.TableSchema.DEFAULT;
        private PoolingMode poolingMode = PoolingMode.SESSION;
        private Set<Integer> shards = Set.of();
        private boolean isolateEachJob;
        private JobQueueConfig queueConfig = JobQueueConfig.defaults();
        private Level handlerFailureLogLevel = Level.WARN;
        private Duration vacuumInterval = QueueVacuum.DEFAULT_INTERVAL;

        private Builder(WorkerConnections connections, String queue, BatchJobHandler handler) {
            this.connections = connections;
            NewJob.requireName("queue", queue, 128);
            this.queue = queue;
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /**
         * Threads, each with its own transaction and connection; default 4.
         *
         * @param threads 1 to 1,000
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder threads(int threads) {
            this.threads = JobQueue.requireThreads(threads);
            return this;
        }

        /**
         * Jobs claimed per transaction; default 10. Larger batches save round trips but hold
         * their rows (and the handler's locks) longer, and a failing batch rolls back more work.
         *
         * @param batchSize 1 to {@value Claim#MAX_LIMIT}
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > Claim.MAX_LIMIT) {
                throw new IllegalArgumentException(
                        "batchSize must be between 1 and " + Claim.MAX_LIMIT + ", was " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /**
         * Longest idle wait without a notification; default 1 s. With LISTEN off, also the
         * longest delay before a new job is seen.
         *
         * @param pollInterval positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = JobQueue.requirePositive("pollInterval", pollInterval);
            return this;
        }

        /**
         * Use LISTEN/NOTIFY wake-up (default true): idle threads wake when a job is enqueued,
         * at the cost of one more connection held for the worker's life.
         *
         * @param listen false to rely on polling alone (required behind a transaction pooler)
         * @return this builder
         */
        public Builder listen(boolean listen) {
            this.listen = listen;
            return this;
        }

        /**
         * How the data source's connections reach the server; default {@link PoolingMode#SESSION}.
         * With {@link PoolingMode#TRANSACTION} (PgBouncer transaction pooling) LISTEN cannot
         * work, and {@link #build()} refuses unless {@code listen(false)} was set.
         *
         * @param poolingMode the mode of {@code dataSource}'s connections
         * @return this builder
         */
        public Builder poolingMode(PoolingMode poolingMode) {
            this.poolingMode = Objects.requireNonNull(poolingMode, "poolingMode");
            return this;
        }

        /**
         * Claim only from these shards; default all.
         *
         * @param shards shard numbers, none negative; empty means all (checked by {@link #build()})
         * @return this builder
         */
        public Builder shards(Set<Integer> shards) {
            this.shards = Set.copyOf(Objects.requireNonNull(shards, "shards"));
            return this;
        }

        /**
         * Hand every job to the handler alone under its own savepoint, not only after a failed
         * batch (default false). Costs two round trips per job; see the class description.
         *
         * @param isolateEachJob true to isolate every job of every batch
         * @return this builder
         */
        public Builder isolateEachJob(boolean isolateEachJob) {
            this.isolateEachJob = isolateEachJob;
            return this;
        }

        /**
         * Retry backoff for failed jobs; default {@link JobQueueConfig#defaults()}. Its
         * {@code notifyOnEnqueue} is ignored: the worker enqueues nothing.
         *
         * @param queueConfig the queue's settings
         * @return this builder
         */
        public Builder queueConfig(JobQueueConfig queueConfig) {
            this.queueConfig = Objects.requireNonNull(queueConfig, "queueConfig");
            return this;
        }

        /**
         * The schema the locksmith tables were migrated to; default
         * {@value dev.locksmith.TableSchema#DEFAULT}. See {@link dev.locksmith.TableSchema}.
         *
         * @param schema a lower-case unquoted identifier
         * @return this builder
         * @throws IllegalArgumentException for an invalid schema name
         */
        public Builder schema(String schema) {
            this.schema = SchemaMapping.requireName(schema);
            return this;
        }

        /**
         * The level at which a failed handler is logged, with its stack trace, when the job will
         * be retried (default {@link Level#WARN}). A job that fails for good is logged at ERROR
         * whatever this says; a failure after the lease was lost at WARN.
         *
         * @param level an SLF4J level
         * @return this builder
         */
        public Builder handlerFailureLogLevel(Level level) {
            this.handlerFailureLogLevel = Objects.requireNonNull(level, "handlerFailureLogLevel");
            return this;
        }

        /**
         * How often the worker looks at the jobs table's dead rows, and VACUUMs the table when
         * there are 10,000 or more; default 5 s. Every claim leaves a dead row, and autovacuum
         * visits a database only once a minute by default (or never, where it is off), so a busy
         * queue slows down as its claims step over dead rows; this keeps it fast. The VACUUM
         * ({@code SKIP_LOCKED}: skipped while another one runs; no truncation, whose exclusive
         * lock claims would wait for) runs on one of the worker's threads between its jobs, on the connection
         * that thread would use, and needs the worker's role to own the table (otherwise the
         * worker logs it once and stops trying) and connections that auto-commit.
         *
         * @param interval {@link Duration#ZERO} to leave vacuum to autovacuum or your own
         *     schedule, else 1 s to 1 hour
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder vacuumInterval(Duration interval) {
            this.vacuumInterval = QueueVacuum.requireInterval(interval);
            return this;
        }

        /**
         * The worker, not yet started.
         *
         * @return a new worker; call {@link TransactionalWorker#start()}
         * @throws IllegalArgumentException for shards or other settings out of range
         * @throws IllegalStateException for LISTEN wake-ups with {@link PoolingMode#TRANSACTION}
         */
        public TransactionalWorker build() {
            JobQueue.requireListenAllowed(listen, poolingMode);
            return new TransactionalWorker(this);
        }
    }
}

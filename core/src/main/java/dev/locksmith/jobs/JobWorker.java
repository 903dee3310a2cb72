package dev.locksmith.jobs;

import dev.locksmith.PoolingMode;
import dev.locksmith.internal.Observing;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Runs a {@link JobHandler} for the jobs of one queue on N threads, in leased mode.
 *
 * <ul>
 *   <li>A claimer thread claims, in one statement per batch, as many jobs as there are free
 *       handler threads, plus for short jobs a few ahead: as many as the threads end in about
 *       100 ms, at most {@link Builder#prefetch} (default eight per thread). A worker whose jobs
 *       take a second or more so holds only jobs it can start; {@code prefetch(0)} makes that
 *       so for every job. {@link Builder#claimers} lets several claim statements run at once,
 *       for workers of many short jobs.</li>
 *   <li>When the queue is empty it waits for a {@code NOTIFY locksmith_jobs} (sent by
 *       {@link JobQueue#enqueueAll} on commit) on a dedicated LISTEN connection, and polls every
 *       {@code pollInterval} regardless. Behind PgBouncer in transaction pooling mode LISTEN does
 *       not work (notifications go to whichever session the pooler picked); declare
 *       {@code poolingMode(PoolingMode.TRANSACTION)}, which refuses LISTEN, set
 *       {@code listen(false)} and rely on polling, or give the worker a direct connection.</li>
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
 *   <li>{@link #close()} stops claiming, lets running handlers finish within the grace period,
 *       then interrupts the rest and gives their jobs back ({@code pending}, attempt not
 *       counted): no job is left {@code running}.</li>
 * </ul>
 *
 * <p><b>Connections.</b> A worker with {@code threads} handler threads needs
 * {@code threads + 4} connections from its data source at the same time
 * ({@link #connectionsNeeded(int, boolean)}): one per running handler transaction, one for
 * claims (one per claimer, {@link #connectionsNeeded(int, boolean, int)}), one for batched
 * completions (and the table's vacuum, {@link Builder#vacuumInterval}), one for heartbeats and
 * rescue, and one held for {@code LISTEN} ({@code threads + 3} with {@code listen(false)}).
 * With fewer, heartbeats wait for a connection while handlers hold them all, leases lapse, and
 * jobs run twice. {@link #start()} fails when the data source is a
 * pool whose maximum size it can read (HikariCP, Apache DBCP 2, Tomcat JDBC) and that maximum is
 * too small; a pool shared with the application needs room for both. Each lost lease is logged
 * at WARN.
 */
public final class JobWorker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(JobWorker.class);
    private static final long COMPLETER_POLL_MILLIS = 50;
    /** The default most jobs claimed ahead, per thread ({@link Builder#prefetch}). */
    private static final int PREFETCH_PER_THREAD = 8;
    /** How long a job claimed ahead should wait for a thread, at the average run. */
    private static final long PREFETCH_HORIZON_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The most jobs one completion statement settles. */
    private static final int MAX_COMPLETION_BATCH = 1000;
    /** The most claim statements a worker runs at once ({@link Builder#claimers}). */
    public static final int MAX_CLAIMERS = 8;

    private final DataSource dataSource;
    private final DSLContext dsl;
    private final JobQueue queue;
    private final Claim claim;
    private final JobHandler handler;
    private final Settings settings;
    private final Duration completionLinger;
    /** Handled jobs waiting for their completion beyond which the claimers wait. */
    private final int completionBacklog;

    private final WorkerListener listener;
    private final Level handlerFailureLogLevel;
    private final Observing observing;

    /** Jobs claimed whose handler has not ended (started or waiting for a thread). */
    private final AtomicInteger outstanding = new AtomicInteger();
    /**
     * {@link #outstanding} plus the jobs claim statements under way have asked for: what the
     * claimers reserve from, with one compare-and-set, so that together they never hold more
     * than the worker may ({@link Builder#claimers}).
     */
    private final AtomicInteger held = new AtomicInteger();
    /** Claim statements that may run at once. */
    private final int claimers;
    /** The most jobs claimed ahead of free threads ({@link Builder#prefetch}). */
    private final int maxPrefetch;
    /** A moving average of handler runs in nanoseconds; negative until one has ended. */
    private final AtomicLong averageRunNanos = new AtomicLong(-1);
    /** Held leases by lease id: a lapsed and re-claimed job has two, and each run settles only its own. */
    private final Map<UUID, Held> inFlight = new ConcurrentHashMap<>();

    /** A held lease and what its handler is doing. */
    private static final class Held {
        final Job job;
        /** From the start of the handler's run until it ends, however it ends. */
        volatile boolean handlerRunning;
        /** From just before the completing statement: the row may be gone for a good reason. */
        volatile boolean completing;
        /** A completion statement that may have settled it failed (its outcome is unknown). */
        volatile boolean uncertain;

        Held(Job job) {
            this.job = job;
        }
    }

    private final ExecutorService handlers;
    private final ScheduledExecutorService maintenance;
    private final List<Thread> claimerThreads = new ArrayList<>();
    /** Jobs whose handlers ended without writing, waiting for the completer. */
    private final BlockingDeque<Held> completions = new LinkedBlockingDeque<>();

    private final Thread completer;
    /** Run by the completer between batches: completions wait meanwhile, their leases heartbeated. */
    private final QueueVacuum vacuum;
    /** False once close() has let the handlers end: the completer then drains and stops. */
    private volatile boolean accepting = true;

    private final QueueNotifications notifications;
    private final AtomicBoolean running = new AtomicBoolean();
    private final ReentrantLock wakeLock = new ReentrantLock();
    private final Condition wakeCondition = wakeLock.newCondition();
    /** Wake-ups so far: a claimer waits until it changes (all of them wake). Guarded by wakeLock. */
    private long wakeGeneration;
    /** The generation of the latest NOTIFICATION wake-up. Guarded by wakeLock. */
    private long notifiedGeneration = -1;

    private JobWorker(Builder b) {
        this.dataSource = b.connections.dataSource();
        this.dsl = dev.locksmith.TableSchema.using(b.connections.dsl(), b.schema);
        this.queue = new JobQueue(dsl, b.queueConfig);
        this.claim = new Claim(b.queue, Math.min(b.threads, Claim.MAX_LIMIT), b.shards);
        this.handler = b.handler;
        this.settings = new Settings(
                b.threads, b.lease, b.pollInterval, b.rescueInterval, b.shutdownGrace, b.workerId, b.listen);
        this.completionLinger = b.completionLinger;
        this.completionBacklog = Math.max(MAX_COMPLETION_BATCH, 10 * b.threads);
        this.listener = b.listener;
        this.handlerFailureLogLevel = b.handlerFailureLogLevel;
        this.observing = Observing.of(dsl);
        this.maxPrefetch = b.prefetch != null ? b.prefetch : PREFETCH_PER_THREAD * b.threads;
        String name = "locksmith-" + b.queue;
        this.handlers = Executors.newFixedThreadPool(b.threads, r -> thread(r, name + "-handler"));
        this.maintenance = Executors.newSingleThreadScheduledExecutor(r -> thread(r, name + "-maintenance"));
        this.claimers = b.claimers;
        for (int i = 1; i <= claimers; i++) {
            claimerThreads.add(thread(this::claimLoop, name + "-claimer" + (claimers == 1 ? "" : "-" + i)));
        }
        this.completer = thread(this::completeLoop, name + "-completer");
        this.vacuum = new QueueVacuum(queue, b.queue, b.vacuumInterval, LOG);
        this.notifications = new QueueNotifications(
                b.connections.dataSource(),
                b.queue,
                b.pollInterval,
                listener::listening,
                () -> wake(WorkerListener.Wake.NOTIFICATION));
    }

    /** Settings as validated by the builder. */
    record Settings(
            int threads,
            Duration lease,
            Duration pollInterval,
            Duration rescueInterval,
            Duration shutdownGrace,
            String workerId,
            boolean listen) {}

    /**
     * A builder for a worker on {@code queue} that runs {@code handler}.
     *
     * @param dataSource connections for claims, handler transactions and (one, held) LISTEN;
     *     must allow {@link #connectionsNeeded(int, boolean, int)} at once
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the work for each job, called on the worker's handler threads
     * @return a builder with the defaults: 4 threads, 30 s lease, 1 s poll, rescue every 30 s,
     *     10 s shutdown grace, LISTEN on
     * @throws IllegalArgumentException for an invalid queue name
     */
    public static Builder builder(DataSource dataSource, String queue, JobHandler handler) {
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
     * @return a builder with the same defaults as {@link #builder(DataSource, String, JobHandler)}
     * @throws IllegalArgumentException for an invalid queue name, or a context whose connections
     *     do not come from a data source
     */
    public static Builder builder(DSLContext dsl, String queue, JobHandler handler) {
        return new Builder(WorkerConnections.of(dsl), queue, handler);
    }

    /** {@return this worker's id, written to {@code jobs.locked_by} of the jobs it leases} */
    public String workerId() {
        return settings.workerId();
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
        return JobQueue.requireThreads(threads) + requireClaimers(claimers) + (listen ? 3 : 2);
    }

    private static int requireClaimers(int claimers) {
        if (claimers < 1 || claimers > MAX_CLAIMERS) {
            throw new IllegalArgumentException("claimers must be between 1 and " + MAX_CLAIMERS + ", was " + claimers);
        }
        return claimers;
    }

    /**
     * Starts the threads; returns at once.
     *
     * @return this worker, running
     * @throws IllegalStateException when the data source's pool is known to allow fewer
     *     connections than {@link #connectionsNeeded(int, boolean, int)}, or when it was started before
     */
    // The maintenance futures are not kept: both tasks catch and log their own failures, and
    // close() stops them through the executor.
    @SuppressWarnings("FutureReturnValueIgnored")
    public JobWorker start() {
        PoolSize.require(
                dataSource,
                connectionsNeeded(settings.threads(), settings.listen(), claimers),
                claimers == 1 ? "worker" : "worker of " + claimers + " claimers",
                settings.threads(),
                settings.listen());
        if (!running.compareAndSet(false, true)) {
            throw new IllegalStateException("worker " + settings.workerId() + " was already started");
        }
        JobQueue.warnIfNotVacuumed(queue, LOG);
        claimerThreads.forEach(Thread::start);
        completer.start();
        if (settings.listen()) {
            notifications.start();
        }
        long heartbeatMillis = Math.max(1, settings.lease().toMillis() / 3);
        maintenance.scheduleWithFixedDelay(this::heartbeat, heartbeatMillis, heartbeatMillis, TimeUnit.MILLISECONDS);
        maintenance.scheduleWithFixedDelay(
                this::rescue, 0, settings.rescueInterval().toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    /**
     * Stops claiming, waits up to the shutdown grace for running handlers, interrupts the rest
     * and gives their jobs back. Returns when every thread has stopped.
     */
    @Override
    public void close() {
        if (!running.compareAndSet(true, false)) {
            return;
        }
        wake(WorkerListener.Wake.INTERNAL);
        claimerThreads.forEach(JobWorker::join);
        if (settings.listen()) {
            notifications.stop();
        }
        handlers.shutdown();
        try {
            if (!handlers.awaitTermination(settings.shutdownGrace().toMillis(), TimeUnit.MILLISECONDS)) {
                handlers.shutdownNow();
                handlers.awaitTermination(settings.shutdownGrace().toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // Leases stay heartbeated until the last batch of completions has been sent.
        accepting = false;
        join(completer);
        maintenance.shutdownNow();
        for (Held held : inFlight.values()) {
            Job job = held.job;
            if (held.handlerRunning) {
                // giving it back would let another worker run it while this handler still does
                LOG.warn(
                        "handler of job {} on queue {} did not stop within the shutdown grace; the job is not given "
                                + "back, its lease expires at {} (or later, if a heartbeat ran)",
                        job.id(),
                        job.queue(),
                        job.lockedUntil());
                continue;
            }
            try {
                if (queue.release(job)) {
                    listener.released(job);
                }
            } catch (RuntimeException e) {
                LOG.warn("could not give job {} back at shutdown; its lease will expire", job.id(), e);
            }
        }
        inFlight.clear();
    }

    // ------------------------------------------------------------------ claimer

    private void claimLoop() {
        while (running.get()) {
            // read before looking for room: a wake-up after this point ends the wait below
            long seen = wakeGeneration();
            try {
                int free = busy() ? 0 : reserve(settings.threads() + prefetchAllowance());
                if (free <= 0) {
                    awaitWake(seen, settings.pollInterval());
                    continue;
                }
                List<Job> jobs;
                try {
                    jobs = queue.claim(
                            new Claim(claim.queue(), free, claim.shards()), settings.lease(), settings.workerId());
                } catch (RuntimeException failed) {
                    held.addAndGet(-free);
                    throw failed;
                }
                // The jobs claimed stay held until their handlers end; the rest of the
                // reservation goes back now, before this claimer waits, for the others to use.
                outstanding.addAndGet(jobs.size());
                held.addAndGet(jobs.size() - free);
                List<Held> claimed = new ArrayList<>(jobs.size());
                for (Job job : jobs) {
                    Held h = new Held(job);
                    inFlight.put(job.leaseId(), h);
                    claimed.add(h);
                }
                for (Held h : claimed) {
                    handlers.execute(() -> run(h));
                }
                if (jobs.size() < free) {
                    listener.idle();
                    awaitWake(seen, settings.pollInterval());
                }
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                return;
            } catch (RuntimeException e) {
                LOG.warn("claiming from queue {} failed, retrying after the poll interval", claim.queue(), e);
                awaitWake(seen, settings.pollInterval());
            }
        }
    }

    /**
     * Whether every thread has a job to go on with and at least half of those claimed ahead
     * have not started: the claimers then wait, for fewer, larger claims. A handler that ends
     * wakes them only when this is no longer so.
     */
    private boolean busy() {
        return outstanding.get() - settings.threads() >= (prefetchAllowance() + 1) / 2;
    }

    /**
     * Reserves room for the next claim statement: what {@code limit} (threads and jobs claimed
     * ahead) leaves beside the jobs held and those other claims under way asked for, split
     * evenly between the claimers, and no more than the completion backlog leaves (handled jobs
     * waiting for their completion still hold leases: while the database is slow to take
     * completions, the worker claims no more than it takes). Returns zero when there is no room.
     * One counter, one compare-and-set: whatever happened meanwhile, the reservation succeeds
     * only if the total it was computed from is still the total.
     */
    private int reserve(int limit) {
        int share = Math.min(Claim.MAX_LIMIT, (limit + claimers - 1) / claimers);
        while (true) {
            int taken = held.get();
            int free = Math.min(limit - taken, completionBacklog - completions.size());
            free = claimSize(Math.min(free, share));
            if (free <= 0) {
                return 0;
            }
            if (held.compareAndSet(taken, taken + free)) {
                return free;
            }
        }
    }

    /**
     * {@code n} rounded down to one of a few claim sizes: exact up to 16, then two steps per
     * power of two (16, 24, 32, 48, 64, 96, ...), less than a third below {@code n}. The claim's
     * limit is part of its statement text ({@link JobStatements}): a worker that asked for
     * whatever was free would send hundreds of different statements, each parsed and planned
     * anew by the server, and read in text rather than binary format by the driver, which
     * prepares a statement only once it has seen the same text a few times.
     */
    static int claimSize(int n) {
        if (n <= 16) {
            return n;
        }
        int step = Integer.highestOneBit(n) / 2;
        return n - n % step;
    }

    /**
     * Jobs to claim ahead of free threads: as many as the threads end in
     * {@link #PREFETCH_HORIZON_NANOS} at the average run so far, at most {@link #maxPrefetch},
     * none before a run has ended. A job claimed ahead so waits about that long for a thread,
     * and a worker with long jobs claims only for its free threads.
     */
    private int prefetchAllowance() {
        long average = averageRunNanos.get();
        if (maxPrefetch == 0 || average < 0) {
            return 0;
        }
        long ahead = settings.threads() * PREFETCH_HORIZON_NANOS / Math.max(1, average);
        return (int) Math.min(maxPrefetch, ahead);
    }

    /** A claimed job's handler ended (or will not run): it is no longer held. */
    private void ended() {
        outstanding.decrementAndGet();
        held.decrementAndGet();
    }

    private void recordRun(long nanos) {
        // an exponential moving average over about the last 16 runs
        averageRunNanos.updateAndGet(average -> average < 0 ? nanos : average + (nanos - average) / 16);
    }

    private void run(Held held) {
        Job job = held.job;
        if (!running.get()) {
            // claimed ahead and not started before close(): it gives the job back
            ended();
            return;
        }
        held.handlerRunning = true;
        long started = System.nanoTime();
        boolean settled = false;
        // The job's MDC keys stay set until the failure, if any, is logged (the catch blocks below).
        JobLogging.Scope mdc = JobLogging.mdc(job, job.attempts());
        Observation handling = observing.start(new Operation.HandleJobs(List.of(job)));
        boolean deferred = false;
        try {
            boolean completedInside = dsl.transactionResult(c -> {
                handler.handle(job, c.dsl());
                if (!queue.wroteInTransaction(c.dsl())) {
                    // Nothing to commit with the completion: it joins the next batch.
                    return false;
                }
                held.completing = true;
                if (!queue.complete(c.dsl(), job)) {
                    throw new LeaseLost();
                }
                return true;
            });
            settled = true;
            handling.end(Outcome.OK);
            if (completedInside) {
                listener.completed(job);
            } else {
                held.completing = true;
                deferred = true;
                completions.add(held);
            }
        } catch (LeaseLost e) {
            settled = true;
            handling.end(Outcome.LEASE_LOST);
            LOG.warn(
                    "handler of job {} ({}) on queue {}, attempt {}, finished after its lease was lost; its "
                            + "transaction was rolled back, and the job runs again under its new lease",
                    job.id(),
                    job.kind(),
                    job.queue(),
                    job.attempts());
            listener.leaseLost(job);
        } catch (Throwable error) {
            // The failure is recorded while the handler's observation is still open, as the
            // completion is on success: its span (locksmith.job.fail) is then part of the job's.
            JobControl control = JobControl.find(error);
            FailResult result = null;
            try {
                // A control is the handler's decision, so it is recorded even while stopping.
                if (running.get() || control != null) {
                    result = recordFailure(job, control, error);
                    settled = result != null;
                }
                // else: stopping, most likely interrupted by close(); it gives the job back
            } finally {
                endHandling(handling, error, result);
            }
        } finally {
            // Keep an unsettled job only while stopping, for close() to give back; otherwise stop
            // heartbeating it so that its lease expires and it is rescued.
            held.handlerRunning = false;
            if (!deferred && (settled || running.get())) {
                inFlight.remove(job.leaseId(), held);
            }
            recordRun(System.nanoTime() - started);
            ended();
            mdc.close();
            if (!busy()) {
                wake(WorkerListener.Wake.INTERNAL);
            }
        }
    }

    /**
     * Records a failed attempt, or what the handler's control asked for, in a transaction of its
     * own; null when that could not be done (the lease then expires and the job is rescued).
     */
    private @Nullable FailResult recordFailure(Job job, @Nullable JobControl control, Throwable error) {
        try {
            FailResult result = dsl.transactionResult(c -> control == null
                    ? queue.fail(c.dsl(), job, JobLogging.describe(error))
                    : queue.settle(c.dsl(), job, control));
            JobLogging.handlerFailed(LOG, handlerFailureLogLevel, job, job.attempts(), error, result);
            listener.failed(job, error, result);
            return result;
        } catch (RuntimeException failToFail) {
            failToFail.addSuppressed(error);
            LOG.warn(
                    "could not record the failure of job {}; its lease will expire and it will be rescued",
                    job.id(),
                    failToFail);
            return null;
        }
    }

    /**
     * Ends a job's handling observation after its handler threw: with the outcome of a snooze or
     * a cancellation, which are not errors, and as an error otherwise.
     */
    static void endHandling(Observation handling, Throwable error, @Nullable FailResult result) {
        if (result != null && result.outcome() == FailResult.Outcome.SNOOZED) {
            handling.end(Outcome.SNOOZED);
        } else if (result != null && result.outcome() == FailResult.Outcome.CANCELLED) {
            handling.end(Outcome.CANCELLED);
        } else {
            handling.error(error);
        }
    }

    private static final class LeaseLost extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LeaseLost() {
            super("lease lost before completion", null, false, false);
        }
    }

    // ------------------------------------------------------------------ batched completion

    /**
     * Completes the jobs of handlers that wrote nothing, in batches: one auto-committed statement
     * for all that are waiting when it is sent (plus those that arrive within the linger), so
     * that a busy worker spends a fraction of a commit per job. Leases are heartbeated until
     * their batch commits. A failed statement (its outcome unknown) is retried; a job it may have
     * completed is then looked up rather than reported lost.
     */
    private void completeLoop() {
        List<Held> batch = new ArrayList<>();
        int failures = 0;
        while (true) {
            if (accepting) {
                vacuum.runIfDue();
            }
            Held first;
            try {
                first = completions.pollFirst(COMPLETER_POLL_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (first == null) {
                if (!accepting) {
                    return;
                }
                continue;
            }
            batch.add(first);
            linger(batch);
            completions.drainTo(batch, MAX_COMPLETION_BATCH - batch.size());
            List<Held> later = splitRepeatedIds(batch);
            try {
                settle(batch, queue.completeLeased(jobs(batch)));
                failures = 0;
                wake(WorkerListener.Wake.INTERNAL); // the claimers may have waited for the backlog
            } catch (RuntimeException e) {
                failures++;
                batch.forEach(h -> h.uncertain = true);
                LOG.warn(
                        "completing {} jobs on queue {} failed (attempt {}); their leases are kept and the "
                                + "completion is retried",
                        batch.size(),
                        claim.queue(),
                        failures,
                        e);
                if (!accepting && failures >= 3) {
                    // close() gives them back: they run again rather than being lost
                    return;
                }
                later.addAll(0, batch);
                pause(Math.min(settings.pollInterval().toMillis(), 1000L * failures));
            }
            for (int i = later.size() - 1; i >= 0; i--) {
                completions.addFirst(later.get(i));
            }
            batch.clear();
        }
    }

    /** Waits up to the linger for more completions, or until a batch of {@link #MAX_COMPLETION_BATCH}. */
    private void linger(List<Held> batch) {
        long lingerNanos = completionLinger.toNanos();
        if (lingerNanos <= 0) {
            return;
        }
        long deadline = System.nanoTime() + lingerNanos;
        try {
            while (batch.size() < MAX_COMPLETION_BATCH) {
                long left = deadline - System.nanoTime();
                Held next = left > 0 ? completions.pollFirst(left, TimeUnit.NANOSECONDS) : null;
                if (next == null) {
                    return;
                }
                batch.add(next);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Removes from {@code batch} the later of two leases of one job (a lapsed lease and its
     * successor, both ended): a statement matching ids and lease ids as sets could otherwise
     * settle one with the other's. Returns them for the next batch.
     */
    private static List<Held> splitRepeatedIds(List<Held> batch) {
        List<Held> later = new ArrayList<>();
        Set<Long> ids = new HashSet<>();
        batch.removeIf(h -> !ids.add(h.job.id()) && later.add(h));
        return later;
    }

    private static List<Job> jobs(List<Held> batch) {
        List<Job> jobs = new ArrayList<>(batch.size());
        batch.forEach(h -> jobs.add(h.job));
        return jobs;
    }

    private void settle(List<Held> batch, Set<Long> completed) {
        Set<Long> unknown = new HashSet<>();
        for (Held held : batch) {
            if (held.uncertain && !completed.contains(held.job.id())) {
                unknown.add(held.job.id());
            }
        }
        // An earlier attempt may have committed: the job is finished unless it is still there.
        Set<Long> unfinished = unknown.isEmpty() ? Set.of() : queue.unfinished(unknown);
        for (Held held : batch) {
            Job job = held.job;
            inFlight.remove(job.leaseId(), held);
            if (completed.contains(job.id()) || (unknown.contains(job.id()) && !unfinished.contains(job.id()))) {
                listener.completed(job);
            } else {
                LOG.warn(
                        "job {} ({}) on queue {}, attempt {}, was handled but its lease was lost before its "
                                + "completion (expired and rescued, or cancelled); the job may run again",
                        job.id(),
                        job.kind(),
                        job.queue(),
                        job.attempts());
                listener.leaseLost(job);
            }
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ waking up

    /** Wakes every waiting claimer. */
    private void wake(WorkerListener.Wake reason) {
        wakeLock.lock();
        try {
            wakeGeneration++;
            if (reason == WorkerListener.Wake.NOTIFICATION) {
                notifiedGeneration = wakeGeneration;
            }
            wakeCondition.signalAll();
        } finally {
            wakeLock.unlock();
        }
    }

    private long wakeGeneration() {
        wakeLock.lock();
        try {
            return wakeGeneration;
        } finally {
            wakeLock.unlock();
        }
    }

    /**
     * Waits until a wake-up after generation {@code seen} (at once if one came already), the
     * timeout, or {@link #close()}; reports why to the listener (a notification first).
     */
    private void awaitWake(long seen, Duration timeout) {
        WorkerListener.Wake reason;
        wakeLock.lock();
        try {
            long nanos = timeout.toNanos();
            while (wakeGeneration == seen && running.get() && nanos > 0) {
                nanos = wakeCondition.awaitNanos(nanos);
            }
            reason = notifiedGeneration > seen
                    ? WorkerListener.Wake.NOTIFICATION
                    : wakeGeneration != seen ? WorkerListener.Wake.INTERNAL : WorkerListener.Wake.POLL;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } finally {
            wakeLock.unlock();
        }
        listener.woke(reason);
    }

    // ------------------------------------------------------------------ maintenance

    /** Extends every held lease in one statement; reports those found gone while their handler runs. */
    private void heartbeat() {
        List<Held> held = List.copyOf(inFlight.values());
        if (held.isEmpty()) {
            return;
        }
        Set<UUID> kept;
        try {
            kept = queue.extendLeases(jobs(held), settings.lease());
        } catch (RuntimeException e) {
            LOG.warn(
                    "heartbeat of {} jobs on queue {} failed; their leases expire unless a later heartbeat succeeds",
                    held.size(),
                    claim.queue(),
                    e);
            return;
        }
        for (Held h : held) {
            Job job = h.job;
            // A row gone because this worker's completion just committed (the heartbeat may even
            // have waited for that transaction) is no lost lease.
            if (!kept.contains(job.leaseId()) && !h.completing && inFlight.remove(job.leaseId(), h)) {
                queue.leaseLost(job);
                LOG.warn(
                        "lease of job {} ({}) on queue {}, attempt {}, was lost while its handler runs (expired and "
                                + "rescued, or cancelled); the job may run again elsewhere, and this run's completion will "
                                + "be rolled back",
                        job.id(),
                        job.kind(),
                        job.queue(),
                        job.attempts());
            }
        }
    }

    private void rescue() {
        try {
            int rescued = queue.rescueExpired();
            if (rescued > 0) {
                LOG.info("rescued {} jobs with expired leases", rescued);
                wake(WorkerListener.Wake.INTERNAL);
            }
        } catch (RuntimeException e) {
            LOG.warn("rescuing expired leases failed", e);
        }
    }

    // ------------------------------------------------------------------ helpers

    private static Thread thread(Runnable body, String name) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        return t;
    }

    private static void join(Thread thread) {
        if (thread.getState() == Thread.State.NEW) {
            return;
        }
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Builds a {@link JobWorker}; every setting is validated when set, with the field named. */
    public static final class Builder {
        private final WorkerConnections connections;
        private final String queue;
        private final JobHandler handler;
        private int threads = 4;
        private Duration lease = Duration.ofSeconds(30);
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration rescueInterval = Duration.ofSeconds(30);
        private Duration shutdownGrace = Duration.ofSeconds(10);
        private String workerId = defaultWorkerId();
        private boolean listen = true;
        private @Nullable Integer prefetch;
        private int claimers = 1;
        private Duration completionLinger = Duration.ZERO;
        private String schema = dev.locksmith.TableSchema.DEFAULT;
        private PoolingMode poolingMode = PoolingMode.SESSION;
        private Set<Integer> shards = Set.of();
        private JobQueueConfig queueConfig = JobQueueConfig.defaults();
        private Level handlerFailureLogLevel = Level.WARN;
        private Duration vacuumInterval = QueueVacuum.DEFAULT_INTERVAL;
        private WorkerListener listener = new WorkerListener() {};

        private Builder(WorkerConnections connections, String queue, JobHandler handler) {
            this.connections = connections;
            NewJob.requireName("queue", queue, 128);
            this.queue = queue;
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /**
         * Handler threads, and the most jobs the worker holds at once; default 4.
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
         * Lease per claimed job, extended every third of it while the handler runs; default
         * 30 s. A crashed worker's jobs run again elsewhere once it expires (and the next rescue
         * runs), so shorter leases mean faster recovery and more heartbeat statements.
         *
         * @param lease positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder lease(Duration lease) {
            this.lease = JobQueue.requirePositive("lease", lease);
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
         * How often this worker rescues expired leases ({@link JobQueue#rescueExpired()}: every
         * queue's, not only its own); default 30 s.
         *
         * @param rescueInterval positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder rescueInterval(Duration rescueInterval) {
            this.rescueInterval = JobQueue.requirePositive("rescueInterval", rescueInterval);
            return this;
        }

        /**
         * How long {@link JobWorker#close()} lets running handlers finish before interrupting
         * them (and as long again after the interrupt); default 10 s.
         *
         * @param shutdownGrace positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder shutdownGrace(Duration shutdownGrace) {
            this.shutdownGrace = JobQueue.requirePositive("shutdownGrace", shutdownGrace);
            return this;
        }

        /**
         * Id written to {@code locked_by}; default {@code <pid>@<host>-<random>}. Unique per
         * worker, so that an operator can tell whose lease a job is under.
         *
         * @param workerId 1 to 128 characters, not blank
         * @return this builder
         * @throws IllegalArgumentException when blank or too long
         */
        public Builder workerId(String workerId) {
            NewJob.requireName("workerId", workerId, 128);
            this.workerId = workerId;
            return this;
        }

        /**
         * The most jobs claimed ahead of free threads; default eight per thread. A thread that
         * ends a job then starts the next without waiting for a claim, and claims are larger:
         * for short jobs the worker runs several times faster. The worker claims ahead only as
         * many jobs as its threads end in about 100 ms at the average run so far (none before
         * the first has ended), so that a job claimed ahead waits about that long for a thread
         * and a worker whose jobs take a second or more claims only for its free threads. Jobs
         * claimed ahead hold leases (heartbeated) that other workers cannot take meanwhile;
         * {@link JobWorker#close()} gives back those not started.
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
         * for their completion. The jobs' leases are kept (heartbeated) until
         * their batch commits; if the worker dies first, they run again once their leases
         * expire, as they would if it died while they ran.
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
            this.completionLinger = linger;
            return this;
        }

        /**
         * Use LISTEN/NOTIFY wake-up (default true), at the cost of one more connection held for
         * the worker's life.
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
         * @param poolingMode the mode of the data source's connections
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
         * Queue settings (retention, retry backoff); default {@link JobQueueConfig#defaults()}.
         *
         * @param queueConfig the settings of the worker's {@link JobQueue}
         * @return this builder
         */
        public Builder queueConfig(JobQueueConfig queueConfig) {
            this.queueConfig = Objects.requireNonNull(queueConfig, "queueConfig");
            return this;
        }

        /**
         * Observer for metrics and tests; default one that ignores everything.
         *
         * @param listener called on the worker's threads; must be quick and must not throw
         * @return this builder
         */
        public Builder listener(WorkerListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
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
         * @return a new worker; call {@link JobWorker#start()}
         * @throws IllegalArgumentException for shards out of range
         * @throws IllegalStateException for LISTEN wake-ups with {@link PoolingMode#TRANSACTION}
         */
        public JobWorker build() {
            JobQueue.requireListenAllowed(listen, poolingMode);
            new Claim(queue, Math.min(threads, Claim.MAX_LIMIT), shards);
            return new JobWorker(this);
        }

        private static String defaultWorkerId() {
            String host = ManagementFactory.getRuntimeMXBean().getName();
            return host + "-" + UUID.randomUUID().toString().substring(0, 8);
        }
    }
}

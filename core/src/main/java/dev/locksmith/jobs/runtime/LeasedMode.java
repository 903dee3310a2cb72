package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.jobs.engine.QueueEngine;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import dev.locksmith.observe.WorkerEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Leased mode ({@code JobWorker}): claimer loops lease jobs in one statement per claim and hand
 * them to a pool of handler threads, claiming ahead of free threads for short jobs; each handler
 * runs in a transaction that completes its job when it wrote something, and otherwise the job
 * joins the next batched completion ({@link Completer}). Held leases are heartbeated in one
 * statement every third of the lease; expired leases of crashed workers are rescued
 * periodically. <b>Internal: not API.</b>
 */
public final class LeasedMode implements Mode {

    /** The default most jobs claimed ahead, per thread. */
    static final int PREFETCH_PER_THREAD = 8;
    /** How long a job claimed ahead should wait for a thread, at the average run. */
    private static final long PREFETCH_HORIZON_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final WorkerRuntime runtime;
    private final QueueEngine engine;
    private final RuntimeSettings settings;
    private final JobHandler handler;
    private final Duration lease;
    private final Duration rescueInterval;
    private final int claimers;
    /** The most jobs claimed ahead of free threads. */
    private final int maxPrefetch;
    /** Handled jobs waiting for their completion beyond which the claimers wait. */
    private final int completionBacklog;

    /** Jobs claimed whose handler has not ended (started or waiting for a thread). */
    private final AtomicInteger outstanding = new AtomicInteger();
    /**
     * {@link #outstanding} plus the jobs claim statements under way have asked for: what the
     * claimers reserve from, with one compare-and-set, so that together they never hold more
     * than the worker may.
     */
    private final AtomicInteger held = new AtomicInteger();
    /** Handlers running now. */
    private final AtomicInteger handlersRunning = new AtomicInteger();
    /** A moving average of handler runs in nanoseconds; negative until one has ended. */
    private final AtomicLong averageRunNanos = new AtomicLong(-1);
    /** Held leases by lease id: a lapsed and re-claimed job has two, and each run settles only its own. */
    private final Map<UUID, HeldJob> inFlight = new ConcurrentHashMap<>();

    private final ExecutorService handlers;
    private final Completer completer;
    /** Run once the last handler that outlived close() has ended. */
    private volatile @Nullable Runnable whenIdle;

    /**
     * Leased mode for {@code runtime}'s worker.
     *
     * @param runtime the worker's runtime
     * @param handler the work for each job
     * @param lease the lease per claimed job
     * @param rescueInterval how often expired leases are rescued
     * @param prefetch the most jobs claimed ahead, or null for eight per thread
     * @param claimers claim statements that may run at once
     * @param completionLinger how long a batched completion waits for more jobs
     */
    public LeasedMode(
            WorkerRuntime runtime,
            JobHandler handler,
            Duration lease,
            Duration rescueInterval,
            @Nullable Integer prefetch,
            int claimers,
            Duration completionLinger) {
        this.runtime = runtime;
        this.engine = runtime.engine();
        this.settings = runtime.settings();
        this.handler = handler;
        this.lease = lease;
        this.rescueInterval = rescueInterval;
        this.claimers = claimers;
        this.maxPrefetch = prefetch != null ? prefetch : PREFETCH_PER_THREAD * settings.threads();
        this.completionBacklog = Math.max(Completer.MAX_BATCH, 10 * settings.threads());
        this.handlers = Executors.newFixedThreadPool(settings.threads(), r -> runtime.handlerThread(r, "handler"));
        this.completer = new Completer(runtime, inFlight, completionLinger);
    }

    /**
     * Connections a leased worker needs at the same time.
     *
     * @param threads handler threads
     * @param listen whether it holds a LISTEN connection
     * @param claimers claim statements at once
     * @return {@code threads + claimers + 3}, or {@code + 2} without LISTEN
     */
    public static int connectionsNeeded(int threads, boolean listen, int claimers) {
        return threads + claimers + (listen ? 3 : 2);
    }

    @Override
    public String description() {
        return claimers == 1 ? "worker" : "worker of " + claimers + " claimers";
    }

    @Override
    public int connectionsNeeded() {
        return connectionsNeeded(settings.threads(), settings.listensOnPool(), claimers);
    }

    @Override
    public int loops() {
        return claimers;
    }

    /** The claimers only claim: handlers run on the handler threads. */
    @Override
    public boolean loopsRunHandlers() {
        return false;
    }

    @Override
    public String loopName(int index) {
        return "claimer" + (claimers == 1 ? "" : "-" + (index + 1));
    }

    @Override
    public void starting() {
        completer.start();
    }

    @Override
    public List<Periodic> periodic() {
        Duration heartbeat = Duration.ofMillis(Math.max(1, lease.toMillis() / 3));
        return List.of(
                new Periodic(heartbeat, heartbeat, this::heartbeat, true),
                new Periodic(Duration.ZERO, rescueInterval, this::rescue, false));
    }

    // ------------------------------------------------------------------ claiming

    @Override
    public Turn turn(int loop) {
        int free = busy() ? 0 : reserve(settings.threads() + prefetchAllowance());
        if (free <= 0) {
            return Turn.FULL;
        }
        List<Job> jobs;
        try {
            jobs = engine.claims.leased(
                    new Claim(settings.queue(), free, settings.shards()), lease, settings.workerId());
        } catch (RuntimeException failed) {
            held.addAndGet(-free);
            throw failed;
        }
        // The jobs claimed stay held until their handlers end; the rest of the reservation goes
        // back now, before this claimer waits, for the others to use.
        outstanding.addAndGet(jobs.size());
        held.addAndGet(jobs.size() - free);
        List<HeldJob> claimed = new ArrayList<>(jobs.size());
        for (Job job : jobs) {
            HeldJob h = new HeldJob(job);
            inFlight.put(job.leaseId(), h);
            claimed.add(h);
        }
        for (HeldJob h : claimed) {
            handlers.execute(() -> run(h));
        }
        if (jobs.size() < free) {
            runtime.observing().workerEvent(WorkerEvent.IDLE, settings.queue());
            return jobs.isEmpty() ? Turn.EMPTY : Turn.FOUND;
        }
        return Turn.MORE;
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
            int free = Math.min(limit - taken, completionBacklog - completer.backlog());
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
     * limit is part of its statement text: a worker that asked for whatever was free would send
     * hundreds of different statements, each parsed and planned anew by the server, and read in
     * text rather than binary format by the driver, which prepares a statement only once it has
     * seen the same text a few times.
     */
    static int claimSize(int n) {
        if (n <= 16) {
            return n;
        }
        int step = Integer.highestOneBit(n) / 2;
        return n - n % step;
    }

    /**
     * Jobs to claim ahead of free threads: as many as the threads end in 100 ms at the average
     * run so far, at most the prefetch, none before a run has ended. A job claimed ahead so waits
     * about that long for a thread, and a worker with long jobs claims only for its free threads.
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

    // ------------------------------------------------------------------ running a job

    private void run(HeldJob held) {
        Job job = held.job;
        if (!runtime.running()) {
            // claimed ahead and not started before close(): it gives the job back
            ended();
            if (outlivedClose()) {
                giveBack(held);
            }
            return;
        }
        handlersRunning.incrementAndGet();
        held.handlerRunning = true;
        long started = System.nanoTime();
        boolean settled = false;
        boolean deferred = false;
        // The job's MDC keys stay set until the failure, if any, is logged (the catch blocks below).
        JobLogging.Scope mdc = JobLogging.mdc(job, job.attempts());
        Observation handling = runtime.observing().start(new Operation.HandleJobs(List.of(job)));
        try {
            boolean completedInside = engine.dsl().transactionResult(c -> {
                handler.handle(job, c.dsl());
                if (!engine.reads.wroteInTransaction(c.dsl())) {
                    // Nothing to commit with the completion: it joins the next batch.
                    return false;
                }
                held.completing = true;
                if (!engine.leases.completeOne(c.dsl(), job)) {
                    throw new LeaseLost();
                }
                return true;
            });
            settled = true;
            handling.end(Outcome.OK);
            if (completedInside) {
                runtime.observing().jobEvent(JobEvent.COMPLETED, job);
                runtime.processed(1);
            } else {
                held.completing = true;
                held.handlerTrace = handling.traceparent();
                deferred = true;
                if (completer.accepting()) {
                    completer.add(held);
                } else {
                    // it outlived close(): the completer has stopped, so it completes its own job
                    completer.complete(List.of(held));
                }
            }
        } catch (LeaseLost e) {
            settled = true;
            handling.end(Outcome.LEASE_LOST);
            settings.log()
                    .warn(
                            "handler of job {} ({}) on queue {}, attempt {}, finished after its lease was lost; its "
                                    + "transaction was rolled back, and the job runs again under its new lease",
                            job.id(),
                            job.kind(),
                            job.queue(),
                            job.attempts());
            engine.leases.lost(job);
        } catch (Throwable error) {
            // The failure is recorded while the handler's observation is still open, as the
            // completion is on success: its span (locksmith.job.fail) is then part of the job's.
            JobControl control = Controls.find(error);
            FailResult result = null;
            try {
                // A control is the handler's decision, so it is recorded even while stopping.
                if (runtime.running() || control != null) {
                    result = recordFailure(job, control, error);
                    settled = result != null;
                }
                // else: stopping, most likely interrupted by close(); the job is given back
            } finally {
                Handling.end(handling, error, result);
            }
        } finally {
            held.handlerRunning = false;
            if (!settled && !deferred && outlivedClose()) {
                // close() has given back what it could and left this job to its handler: give it
                // back now, as close() would have (the attempt was cut short by its interrupt)
                giveBack(held);
            } else if (!deferred && (settled || runtime.running())) {
                // Keep an unsettled job only while stopping, for close() to give back; otherwise
                // stop heartbeating it so that its lease expires and it is rescued.
                inFlight.remove(job.leaseId(), held);
            }
            recordRun(System.nanoTime() - started);
            ended();
            mdc.close();
            handlersRunning.decrementAndGet();
            if (!runtime.running()) {
                idleAfterClose();
            } else if (!busy()) {
                runtime.wakeup().wake(Wakeup.Reason.INTERNAL);
            }
        }
    }

    /** Whether close() is done with the handlers and left the rest to those still running. */
    private boolean outlivedClose() {
        return whenIdle != null;
    }

    /**
     * Records a failed attempt, or what the handler's control asked for, in a transaction of its
     * own; null when that could not be done (the lease then expires and the job is rescued).
     */
    private @Nullable FailResult recordFailure(Job job, @Nullable JobControl control, Throwable error) {
        try {
            FailResult result = engine.dsl()
                    .transactionResult(c -> control == null
                            ? engine.settlement.fail(c.dsl(), job, dev.locksmith.internal.ErrorTexts.describe(error))
                            : engine.settlement.settle(c.dsl(), job, control));
            JobLogging.handlerFailed(
                    settings.log(), settings.handlerFailureLogLevel(), job, job.attempts(), error, result);
            if (result.outcome() != FailResult.Outcome.LEASE_LOST) {
                runtime.processed(1);
            }
            return result;
        } catch (RuntimeException failToFail) {
            failToFail.addSuppressed(error);
            settings.log()
                    .warn(
                            "could not record the failure of job {}; its lease will expire and it will be rescued",
                            job.id(),
                            failToFail);
            return null;
        }
    }

    private static final class LeaseLost extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LeaseLost() {
            super("lease lost before completion", null, false, false);
        }
    }

    // ------------------------------------------------------------------ maintenance

    /** Extends every held lease in one statement; reports those found gone while their handler runs. */
    private void heartbeat() {
        List<HeldJob> holding = List.copyOf(inFlight.values());
        if (holding.isEmpty()) {
            return;
        }
        List<Job> jobs = new ArrayList<>(holding.size());
        holding.forEach(h -> jobs.add(h.job));
        Set<UUID> kept;
        try {
            kept = engine.leases.extendAll(jobs, lease);
        } catch (RuntimeException e) {
            settings.log()
                    .warn(
                            "heartbeat of {} jobs on queue {} failed; their leases expire unless a later heartbeat "
                                    + "succeeds",
                            holding.size(),
                            settings.queue(),
                            e);
            return;
        }
        for (HeldJob h : holding) {
            Job job = h.job;
            // A row gone because this worker's completion just committed (the heartbeat may even
            // have waited for that transaction) is no lost lease.
            if (!kept.contains(job.leaseId()) && !h.completing && inFlight.remove(job.leaseId(), h)) {
                engine.leases.lost(job);
                settings.log()
                        .warn(
                                "lease of job {} ({}) on queue {}, attempt {}, was lost while its handler runs (expired "
                                        + "and rescued, or cancelled); the job may run again elsewhere, and this run's "
                                        + "completion will be rolled back",
                                job.id(),
                                job.kind(),
                                job.queue(),
                                job.attempts());
            }
        }
    }

    private void rescue() {
        try {
            int rescued = engine.maintenance.rescueExpired();
            if (rescued > 0) {
                settings.log().info("rescued {} jobs with expired leases", rescued);
                runtime.wakeup().wake(Wakeup.Reason.INTERNAL);
            }
        } catch (RuntimeException e) {
            settings.log().warn("rescuing expired leases failed", e);
        }
    }

    // ------------------------------------------------------------------ stopping

    /**
     * Lets running handlers finish within the grace, interrupts the rest and waits as long again;
     * sends the last completions; gives back the jobs claimed ahead and those whose handlers were
     * interrupted (pending again, attempt not counted). A handler that outlives all that keeps its
     * job: its lease goes on being heartbeated until it ends, and its end settles the job, so that
     * no other worker runs it meanwhile.
     */
    @Override
    public List<String> stop(Duration grace, Runnable afterIdle) {
        handlers.shutdown();
        try {
            if (!handlers.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                handlers.shutdownNow();
                handlers.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // Leases stay heartbeated until the last batch of completions has been sent.
        completer.drain();
        // From now on a handler still running settles its own job when it ends.
        whenIdle = afterIdle;
        List<String> stuck = new ArrayList<>();
        for (HeldJob h : inFlight.values()) {
            if (h.handlerRunning) {
                stuck.add("job " + h.job.id());
            } else if (!h.completing) {
                giveBack(h);
            }
        }
        idleAfterClose();
        return stuck.isEmpty() ? List.of() : List.of("handlers of " + String.join(", ", stuck));
    }

    /** Gives a held job back (pending, attempt not counted), and stops heartbeating it. */
    private void giveBack(HeldJob h) {
        try {
            engine.leases.release(h.job);
        } catch (RuntimeException e) {
            settings.log().warn("could not give job {} back at shutdown; its lease will expire", h.job.id(), e);
        }
        inFlight.remove(h.job.leaseId(), h);
    }

    /** After close(): once no handler runs any more, the heartbeats stop. */
    private void idleAfterClose() {
        Runnable after = whenIdle;
        if (after == null
                || handlersRunning.get() > 0
                || inFlight.values().stream().anyMatch(h -> h.handlerRunning)) {
            return;
        }
        synchronized (this) {
            if (whenIdle != after) {
                return;
            }
            whenIdle = LeasedMode::nothing;
        }
        after.run();
    }

    /** What is left to run once idle after close(): nothing, it ran. */
    private static void nothing() {}

    @Override
    public int busyHandlers() {
        return handlersRunning.get();
    }
}

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
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Leased mode ({@code JobWorker}): claimer loops lease jobs in one statement per claim and hand
 * them to a pool of handler threads, claiming ahead of free threads for short jobs; a handler
 * thread that ends its job claims its next one itself while none claimed ahead waits; each handler
 * runs in a transaction that completes its job when it wrote something, and otherwise the job
 * joins the next batched completion ({@link Completer}). Held leases are heartbeated in one
 * statement every third of the lease; expired leases of crashed workers are rescued
 * periodically. <b>Internal: not API.</b>
 */
public final class LeasedMode implements Mode {

    /** The default most jobs claimed ahead, per thread. */
    static final int PREFETCH_PER_THREAD = 8;

    private final WorkerRuntime runtime;
    private final QueueEngine engine;
    private final RuntimeSettings settings;
    private final JobHandler handler;
    private final Duration lease;
    private final Duration rescueInterval;
    private final int claimers;
    /** How many jobs the claimers may claim now. */
    private final ClaimRoom room;
    /**
     * One permit per claimer: a claim statement, a claimer's or a handler thread's, holds one
     * until the jobs it found are held (run, or queued for a thread).
     */
    private final Semaphore claimSlots;
    /** Handlers running now. */
    private final AtomicInteger handlersRunning = new AtomicInteger();
    /** Held leases: a lapsed and re-claimed job has two, and each run settles only its own. */
    private final HeldLeases leases;

    private final ThreadPoolExecutor handlers;
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
     * @param prefetch the most jobs claimed ahead, or null for eight per thread, growing while
     *     claims are slow
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
        this.claimSlots = new Semaphore(claimers);
        // newFixedThreadPool's executor, typed so that a handler thread can see jobs waiting for one
        this.handlers = new ThreadPoolExecutor(
                settings.threads(),
                settings.threads(),
                0,
                TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(),
                r -> runtime.handlerThread(r, "handler"));
        this.leases = new HeldLeases(runtime, lease);
        this.completer = new Completer(runtime, leases, completionLinger, this::backlogRefuses);
        this.room = new ClaimRoom(
                settings.threads(),
                claimers,
                prefetch != null ? prefetch : PREFETCH_PER_THREAD * settings.threads(),
                prefetch == null,
                Math.max(Completer.MAX_BATCH, 10 * settings.threads()),
                completer::backlog);
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
        // made now, by the thread starting the worker, as the claimers are: the thread that sets
        // an idle handler to claim (claimOnIdleHandler) may be a producer's, committing an enqueue
        handlers.prestartAllCoreThreads();
        completer.start();
    }

    @Override
    public List<Periodic> periodic() {
        Duration heartbeat = Duration.ofMillis(Math.max(1, lease.toMillis() / 3));
        return List.of(
                new Periodic(heartbeat, heartbeat, leases::heartbeat, true),
                new Periodic(Duration.ZERO, rescueInterval, leases::rescue, false));
    }

    // ------------------------------------------------------------------ claiming

    @Override
    public Turn turn(int loop) {
        try {
            claimSlots.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Turn.FULL;
        }
        List<HeldJob> jobs;
        int free;
        try {
            free = room.reserve();
            if (free <= 0) {
                return Turn.FULL;
            }
            jobs = claim(free);
            for (HeldJob h : jobs) {
                handlers.execute(() -> run(h));
            }
        } finally {
            claimSlots.release();
        }
        if (jobs.size() < free) {
            runtime.observing().workerEvent(WorkerEvent.IDLE, settings.queue());
            return jobs.isEmpty() ? Turn.EMPTY : Turn.FOUND;
        }
        return Turn.MORE;
    }

    /**
     * Claims announced jobs on an idle handler thread, which runs the first itself
     * ({@link #claimNext}): when a handler thread is idle, no job claimed ahead waits for one, and
     * no claim is under way. Otherwise (or when the claim then finds the claimers' slot taken
     * after all) the claimers are woken.
     */
    @Override
    public boolean claimOnIdleHandler() {
        if (handlers.getActiveCount() >= settings.threads()
                || !handlers.getQueue().isEmpty()
                || claimSlots.availablePermits() == 0) {
            return false;
        }
        try {
            handlers.execute(() -> {
                HeldJob first = claimNext(true);
                if (first != null) {
                    run(first);
                }
            });
            return true;
        } catch (RejectedExecutionException stopping) {
            return false;
        }
    }

    // ------------------------------------------------------------------ running a job

    /**
     * Runs {@code first}, then, while no job claimed ahead waits for a thread, claims the next
     * jobs itself and runs the first, as graphile-worker's workers get their next job. A job committed while
     * the thread ran its last one is caught by this claim and starts on this thread as the claim
     * returns, rather than after a claimer wakes, claims and hands it to a handler thread: two
     * threads fewer to wake per job, which on a busy machine is much of its pick-up time (at
     * 1 x 1,000 jobs/s about a third of the jobs are caught so). The claimers go on claiming
     * what notifications announce, and what is claimed ahead of the threads.
     */
    private void run(HeldJob first) {
        HeldJob next = first;
        while (next != null) {
            next = runOne(next) ? claimNext(false) : null;
        }
    }

    /**
     * The next job for a handler thread that just ended one, or for an idle one that announced
     * jobs set to work ({@link #claimOnIdleHandler}), or null. One claim statement, for
     * what a claimer's would ask ({@link ClaimRoom#reserve}), or for this thread's one job when
     * the worker is {@linkplain ClaimRoom#busy busy} otherwise: the first job found is this
     * thread's, the rest are queued as claimed ahead. Asking for only one would, with a backlog,
     * take a statement per job through the one claimer's slot: at 8 x 1,000 jobs/s on a loaded
     * machine the worker then fell behind (p50 0.5 s). The claim takes one of the claimers'
     * slots ({@link #claimSlots}), and is made only when one is free and no job claimed ahead
     * waits for a thread, so that the worker's claims never overlap beyond {@code claimers} and
     * the jobs it holds start in claim order: none is passed by a job claimed later, nor by one
     * that a claim under way made skip its locked rows. A claim that found none is left at that:
     * a job committed after it is announced to the claimers. Otherwise (a claim under way, jobs
     * waiting, no room, a failure) the claimers are woken as a handler's end woke them before.
     */
    private @Nullable HeldJob claimNext(boolean announced) {
        if (!runtime.running()) {
            return null;
        }
        if (!claimSlots.tryAcquire()) {
            wakeClaimersIfRoom();
            return null;
        }
        int free = 0;
        List<HeldJob> claimed;
        try {
            if (handlers.getQueue().isEmpty()) {
                free = room.reserve();
                free = free > 0 ? free : room.reserveOne() ? 1 : 0;
            }
            if (free == 0) {
                wakeClaimersIfRoom();
                return null;
            }
            claimed = claim(free);
            // the first is this thread's; the rest, claimed ahead, queue for the next free thread
            // before the slot is given back, as a claimer's do
            for (HeldJob h : claimed.subList(Math.min(1, claimed.size()), claimed.size())) {
                queue(h);
            }
            if (announced && claimed.size() == free) {
                // a claimer's full claim claims again at once (Turn.MORE): more may be announced
                wakeClaimersIfRoom();
            }
        } catch (RuntimeException e) {
            settings.log()
                    .warn(
                            "claiming the next job of queue {} on a handler thread failed; the claimers go on",
                            settings.queue(),
                            e);
            wakeClaimersIfRoom();
            return null;
        } finally {
            claimSlots.release();
        }
        if (claimed.isEmpty()) {
            // the thread waits for its next job from here: the claimers' turns report the same
            runtime.observing().workerEvent(WorkerEvent.IDLE, settings.queue());
            return null;
        }
        runtime.foundJobs();
        return claimed.get(0);
    }

    /** Queues a job claimed ahead for the next free handler thread. */
    private void queue(HeldJob h) {
        try {
            handlers.execute(() -> run(h));
        } catch (RejectedExecutionException stopping) {
            // close() stopped the handler threads meanwhile: not started, it is given back
            runOne(h);
        }
    }

    /**
     * One leased claim statement for the {@code reserved} jobs reserved in {@link #room}: the jobs
     * found stay held and the rest of the reservation goes back; a failed statement gives it all
     * back.
     */
    private List<HeldJob> claim(int reserved) {
        List<Job> jobs;
        long started = System.nanoTime();
        try {
            jobs = engine.claims.leased(
                    new Claim(settings.queue(), reserved, settings.shards()), lease, settings.workerId());
        } catch (RuntimeException failed) {
            room.failed(reserved);
            throw failed;
        }
        room.recordClaim(System.nanoTime() - started);
        room.claimed(reserved, jobs.size());
        return leases.hold(jobs);
    }

    /** Whether that many completions waiting refuse the claimers (the room is made after the completer). */
    private boolean backlogRefuses(int waiting) {
        return room.refuses(waiting);
    }

    private void wakeClaimersIfRoom() {
        if (runtime.running() && !room.busy()) {
            runtime.wakeup().wake(Wakeup.Reason.INTERNAL);
        }
    }

    /** Runs one claimed job's handler and settles it; returns whether the worker still runs. */
    private boolean runOne(HeldJob held) {
        Job job = held.job;
        if (!runtime.running()) {
            // claimed ahead and not started before close(): it gives the job back
            room.ended();
            if (outlivedClose()) {
                leases.giveBack(held);
            }
            return false;
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
                leases.giveBack(held);
            } else if (!deferred && (settled || runtime.running())) {
                // Keep an unsettled job only while stopping, for close() to give back; otherwise
                // stop heartbeating it so that its lease expires and it is rescued.
                leases.forget(held);
            }
            room.recordRun(System.nanoTime() - started);
            room.ended();
            mdc.close();
            handlersRunning.decrementAndGet();
            if (!runtime.running()) {
                idleAfterClose();
            }
        }
        return runtime.running();
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
        for (HeldJob h : leases.all()) {
            if (h.handlerRunning) {
                stuck.add("job " + h.job.id());
            } else if (!h.completing) {
                leases.giveBack(h);
            }
        }
        idleAfterClose();
        return stuck.isEmpty() ? List.of() : List.of("handlers of " + String.join(", ", stuck));
    }

    /** After close(): once no handler runs any more, the heartbeats stop. */
    private void idleAfterClose() {
        Runnable after = whenIdle;
        if (after == null || handlersRunning.get() > 0 || leases.anyHandlerRunning()) {
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

package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.Job;
import dev.locksmith.observe.JobEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingDeque;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

/**
 * A leased worker's batched completion: the jobs whose handlers wrote nothing are completed in
 * batches, one auto-committed statement for all that are waiting when it is sent (plus those that
 * arrive within the linger), so that a busy worker spends a fraction of a commit per job. Their
 * leases are heartbeated until their batch commits. A failed statement (its outcome unknown) is
 * retried; a job it may have completed is then looked up rather than reported lost. Between
 * batches the thread runs the table's vacuum, on the connection it would use.
 */
final class Completer {

    private static final long POLL_MILLIS = 50;
    /** The most jobs one completion statement settles. */
    static final int MAX_BATCH = 1000;

    private final WorkerRuntime runtime;
    private final HeldLeases leases;
    /** Whether a backlog of that many completions refuses the claimers' reservations. */
    private final IntPredicate backlogRefuses;

    private final Duration linger;
    private final Thread thread;
    /** Jobs whose handlers ended without writing, waiting for the completer. */
    private final BlockingDeque<HeldJob> completions = new LinkedBlockingDeque<>();
    /** False once close() has let the handlers end: the completer then drains and stops. */
    private volatile boolean accepting = true;

    Completer(WorkerRuntime runtime, HeldLeases leases, Duration linger, IntPredicate backlogRefuses) {
        this.runtime = runtime;
        this.leases = leases;
        this.backlogRefuses = backlogRefuses;
        this.linger = linger;
        this.thread = runtime.thread(this::loop, "completer");
    }

    void start() {
        thread.start();
    }

    /** Jobs waiting for their completion. */
    int backlog() {
        return completions.size();
    }

    /** Whether the completer still takes jobs; after {@link #drain()}, their handlers complete them. */
    boolean accepting() {
        return accepting;
    }

    void add(HeldJob held) {
        completions.add(held);
    }

    /** Sends what waits, then stops; returns when the thread has. */
    void drain() {
        accepting = false;
        if (thread.getState() == Thread.State.NEW) {
            return;
        }
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void loop() {
        List<HeldJob> batch = new ArrayList<>();
        int failures = 0;
        while (true) {
            if (accepting) {
                runtime.upkeep();
            }
            HeldJob first;
            try {
                first = completions.pollFirst(POLL_MILLIS, TimeUnit.MILLISECONDS);
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
            completions.drainTo(batch, MAX_BATCH - batch.size());
            // every job added since the last batch is in this one or still waiting: at least the
            // backlog any reservation read meanwhile
            int backlogSeen = batch.size() + completions.size();
            List<HeldJob> later = splitRepeatedIds(batch);
            try {
                complete(batch);
                failures = 0;
                if (backlogRefuses.test(backlogSeen) || keyed(batch)) {
                    // the claimers may have waited for the backlog, or for these jobs' keys (the
                    // next job of an ordering key, a concurrency key's slot); otherwise a
                    // wake-up would cost an empty claim per batch
                    runtime.wakeup().wake(Wakeup.Reason.INTERNAL);
                }
            } catch (RuntimeException e) {
                failures++;
                batch.forEach(h -> h.uncertain = true);
                runtime.log()
                        .warn(
                                "completing {} jobs on queue {} failed (attempt {}); their leases are kept and the "
                                        + "completion is retried",
                                batch.size(),
                                runtime.settings().queue(),
                                failures,
                                e);
                if (!accepting && failures >= 3) {
                    // close() gives them back: they run again rather than being lost
                    return;
                }
                later.addAll(0, batch);
                pause(Math.min(runtime.settings().pollInterval().toMillis(), 1000L * failures));
            }
            for (int i = later.size() - 1; i >= 0; i--) {
                completions.addFirst(later.get(i));
            }
            batch.clear();
        }
    }

    /** Whether a job of {@code batch} has an ordering or concurrency key, which its end frees. */
    private static boolean keyed(List<HeldJob> batch) {
        for (HeldJob h : batch) {
            if (h.job.orderingKey() != null || h.job.concurrencyKey() != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * Completes {@code batch} in one auto-committed statement, and reports each job: completed,
     * or its lease lost. A job of an earlier attempt whose outcome is unknown is completed unless
     * it is still there.
     */
    void complete(List<HeldJob> batch) {
        List<Job> jobs = new ArrayList<>(batch.size());
        List<String> links = new ArrayList<>();
        for (HeldJob h : batch) {
            jobs.add(h.job);
            if (h.handlerTrace != null) {
                links.add(h.handlerTrace);
            }
        }
        Set<Long> completed =
                runtime.engine().leases.completeUnreported(runtime.engine().dsl(), jobs, links);
        Set<Long> unknown = new HashSet<>();
        for (HeldJob held : batch) {
            if (held.uncertain && !completed.contains(held.job.id())) {
                unknown.add(held.job.id());
            }
        }
        // An earlier attempt may have committed: the job is finished unless it is still there.
        Set<Long> unfinished =
                unknown.isEmpty() ? Set.of() : runtime.engine().reads.unfinished(unknown);
        int done = 0;
        for (HeldJob held : batch) {
            Job job = held.job;
            leases.forget(held);
            if (completed.contains(job.id()) || (unknown.contains(job.id()) && !unfinished.contains(job.id()))) {
                runtime.observing().jobEvent(JobEvent.COMPLETED, job);
                done++;
            } else {
                runtime.log()
                        .warn(
                                "job {} ({}) on queue {}, attempt {}, was handled but its lease was lost before its "
                                        + "completion (expired and rescued, or cancelled); the job may run again",
                                job.id(),
                                job.kind(),
                                job.queue(),
                                job.attempts());
                runtime.engine().leases.lost(job);
            }
        }
        runtime.processed(done);
    }

    /** Waits up to the linger for more completions, or until a batch of {@link #MAX_BATCH}. */
    private void linger(List<HeldJob> batch) {
        long lingerNanos = linger.toNanos();
        if (lingerNanos <= 0) {
            return;
        }
        long deadline = System.nanoTime() + lingerNanos;
        try {
            while (batch.size() < MAX_BATCH) {
                long left = deadline - System.nanoTime();
                HeldJob next = left > 0 ? completions.pollFirst(left, TimeUnit.NANOSECONDS) : null;
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
    private static List<HeldJob> splitRepeatedIds(List<HeldJob> batch) {
        List<HeldJob> later = new ArrayList<>();
        Set<Long> ids = new HashSet<>();
        batch.removeIf(h -> !ids.add(h.job.id()) && later.add(h));
        return later;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

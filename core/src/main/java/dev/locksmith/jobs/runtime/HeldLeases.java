package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.engine.QueueEngine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The leases a leased worker holds, by lease id (a lapsed and re-claimed job has two, and each
 * run settles only its own): recorded as claimed, extended together by one heartbeat statement,
 * forgotten once settled, given back at shutdown; and the periodic rescue of other workers'
 * expired leases.
 */
final class HeldLeases {

    private final WorkerRuntime runtime;
    private final QueueEngine engine;
    private final RuntimeSettings settings;
    private final Duration lease;
    private final Map<UUID, HeldJob> byLeaseId = new ConcurrentHashMap<>();

    HeldLeases(WorkerRuntime runtime, Duration lease) {
        this.runtime = runtime;
        this.engine = runtime.engine();
        this.settings = runtime.settings();
        this.lease = lease;
    }

    /** {@code jobs}, just claimed, as held leases (heartbeated from now on), in claim order. */
    List<HeldJob> hold(List<Job> jobs) {
        List<HeldJob> held = new ArrayList<>(jobs.size());
        for (Job job : jobs) {
            HeldJob h = new HeldJob(job);
            byLeaseId.put(job.leaseId(), h);
            held.add(h);
        }
        return held;
    }

    /** Stops heartbeating {@code h}'s lease (settled, or left to expire); false if it was not held. */
    boolean forget(HeldJob h) {
        return byLeaseId.remove(h.job.leaseId(), h);
    }

    /** The leases held now. */
    Collection<HeldJob> all() {
        return byLeaseId.values();
    }

    /** Whether a handler runs the job of any lease held now. */
    boolean anyHandlerRunning() {
        return byLeaseId.values().stream().anyMatch(h -> h.handlerRunning);
    }

    /** Extends every held lease in one statement; reports those found gone while their handler runs. */
    void heartbeat() {
        List<HeldJob> holding = List.copyOf(byLeaseId.values());
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
            if (!kept.contains(job.leaseId()) && !h.completing && forget(h)) {
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

    /** Rescues the queue's expired leases (pending again), and wakes the claimers when it did. */
    void rescue() {
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

    /** Gives a held job back (pending, attempt not counted), and stops heartbeating it. */
    void giveBack(HeldJob h) {
        try {
            engine.leases.release(h.job);
        } catch (RuntimeException e) {
            settings.log().warn("could not give job {} back at shutdown; its lease will expire", h.job.id(), e);
        }
        forget(h);
    }
}

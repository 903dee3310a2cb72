package dev.locksmith.micrometer;

import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.WorkerEvent;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The job meters of one queue: claim, complete and fail timers, rescue counters, and per job kind
 * the event counters and the handler timer. Found by plain map reads once registered, so counting
 * a job allocates nothing.
 */
final class JobMeters {

    /** The slot after the job events' (see {@link #slot(JobEvent)}). */
    private static final int ENQUEUED = 8;

    private static final int RESCUED_TO_PENDING = 0;
    private static final int RESCUED_TO_FAILED = 1;

    /** The {@code reason} tags of {@code locksmith.worker.wakeups}, by slot. */
    private static final java.util.List<String> WAKE_REASONS =
            java.util.List.of("notification", "poll", "internal", "in_process");

    private final MeterRegistry registry;
    private final String queue;
    final ByOutcome<Timer> claim;
    final ByOutcome<Timer> complete;
    final ByOutcome<Timer> fail;
    private final AtomicReferenceArray<Counter> rescued = new AtomicReferenceArray<>(2);
    private final AtomicReferenceArray<Counter> wakeups = new AtomicReferenceArray<>(WAKE_REASONS.size());
    private final ConcurrentHashMap<String, Kind> kinds = new ConcurrentHashMap<>();

    JobMeters(MeterRegistry registry, String queue) {
        this.registry = registry;
        this.queue = queue;
        this.claim = timers("locksmith.jobs.claim", "Claim statements (leased and in-transaction), by outcome");
        this.complete = timers("locksmith.jobs.complete", "Completions of leased jobs (complete, completeAll)");
        this.fail = timers("locksmith.jobs.fail", "Recordings of failed attempts, by what became of the job");
    }

    /** The meters of one job kind of this queue. */
    Kind kind(String kind) {
        Kind meters = kinds.get(kind);
        return meters != null ? meters : kinds.computeIfAbsent(kind, Kind::new);
    }

    /** Counts jobs {@code rescueExpired} took back to pending or failed. */
    void rescued(int toPending, int toFailed) {
        if (toPending > 0) {
            rescuedCounter(RESCUED_TO_PENDING).increment(toPending);
        }
        if (toFailed > 0) {
            rescuedCounter(RESCUED_TO_FAILED).increment(toFailed);
        }
    }

    private Counter rescuedCounter(int slot) {
        Counter counter = rescued.get(slot);
        if (counter == null) {
            counter = Counter.builder("locksmith.jobs.rescued")
                    .description(
                            "Jobs whose lease expired, taken back by rescueExpired: to pending, or failed for good")
                    .tag("queue", queue)
                    .tag("outcome", slot == RESCUED_TO_PENDING ? "pending" : "failed")
                    .register(registry);
            rescued.set(slot, counter);
        }
        return counter;
    }

    /**
     * Counts a worker thread's wake-up ({@code locksmith.worker.wakeups}, tagged {@code reason}:
     * {@code notification}, {@code poll}, {@code internal} or {@code in_process}); other worker
     * events are not counted.
     */
    void workerEvent(WorkerEvent event) {
        int slot;
        switch (event) {
            case WOKE_BY_NOTIFICATION -> slot = 0;
            case WOKE_BY_POLL -> slot = 1;
            case WOKE_INTERNALLY -> slot = 2;
            case WOKE_IN_PROCESS -> slot = 3;
            default -> {
                return;
            }
        }
        Counter counter = wakeups.get(slot);
        if (counter == null) {
            counter = Counter.builder("locksmith.worker.wakeups")
                    .description("Idle worker threads woken, by why: a NOTIFY for the queue, the poll, the worker "
                            + "itself, or an enqueue committed in this JVM; no notification wake-ups while jobs "
                            + "arrive from other JVMs means LISTEN does not work")
                    .tag("queue", queue)
                    .tag("reason", WAKE_REASONS.get(slot))
                    .register(registry);
            wakeups.set(slot, counter);
        }
        counter.increment();
    }

    private ByOutcome<Timer> timers(String name, String description) {
        return new ByOutcome<>(outcome -> Timer.builder(name)
                .description(description)
                .tag("queue", queue)
                .tag("outcome", outcome)
                .register(registry));
    }

    /** The meters of one (queue, kind). */
    final class Kind {
        private final String kind;
        private final AtomicReferenceArray<Counter> counters = new AtomicReferenceArray<>(ENQUEUED + 1);
        final ByOutcome<Timer> handler;

        Kind(String kind) {
            this.kind = kind;
            this.handler = new ByOutcome<>(outcome -> Timer.builder("locksmith.jobs.handler")
                    .description("Handler runs (for a TransactionalWorker batch, one run per batch), by outcome")
                    .tag("queue", queue)
                    .tag("kind", kind)
                    .tag("outcome", outcome)
                    .register(registry));
        }

        /** Counts jobs inserted. */
        void enqueued(int count) {
            counter(ENQUEUED, "locksmith.jobs.inserted", ENQUEUED_DESCRIPTION).increment(count);
        }

        /** Counts one job event. */
        void event(JobEvent event) {
            counter(slot(event), name(event), description(event)).increment();
        }

        private Counter counter(int slot, String name, String description) {
            Counter counter = counters.get(slot);
            if (counter == null) {
                counter = Counter.builder(name)
                        .description(description)
                        .tag("queue", queue)
                        .tag("kind", kind)
                        .register(registry);
                counters.set(slot, counter);
            }
            return counter;
        }
    }

    private static final String ENQUEUED_DESCRIPTION =
            "Jobs inserted by enqueue, counted when the INSERT runs: in the producer's transaction, so an "
                    + "enqueue that rolls back is counted too (live duplicates of a unique key, which insert "
                    + "nothing, are not); the backlog is the locksmith.jobs.depth gauge";

    private static int slot(JobEvent event) {
        return switch (event) {
            case CLAIMED -> 0;
            case COMPLETED -> 1;
            case RETRY_SCHEDULED -> 2;
            case FAILED -> 3;
            case LEASE_LOST -> 4;
            case RELEASED -> 5;
            case SNOOZED -> 6;
            case CANCELLED -> 7;
        };
    }

    private static String name(JobEvent event) {
        return switch (event) {
            case CLAIMED -> "locksmith.jobs.claimed";
            case COMPLETED -> "locksmith.jobs.completed";
            case RETRY_SCHEDULED -> "locksmith.jobs.retried";
            case FAILED -> "locksmith.jobs.failed";
            case LEASE_LOST -> "locksmith.jobs.lease.lost";
            case RELEASED -> "locksmith.jobs.released";
            case SNOOZED -> "locksmith.jobs.snoozed";
            case CANCELLED -> "locksmith.jobs.cancelled";
        };
    }

    private static String description(JobEvent event) {
        return switch (event) {
            case CLAIMED -> "Jobs claimed, leased or in a transaction";
            case COMPLETED -> "Jobs completed";
            case RETRY_SCHEDULED -> "Failed attempts after which the job will run again";
            case FAILED -> "Jobs that failed for good (last attempt used)";
            case LEASE_LOST -> "Leases found gone by their holder (once per lease)";
            case RELEASED -> "Leased jobs given back without counting the attempt";
            case SNOOZED -> "Jobs their handler snoozed (run again later, the attempt not counted)";
            case CANCELLED -> "Jobs their handler cancelled";
        };
    }
}

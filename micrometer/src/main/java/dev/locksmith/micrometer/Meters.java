package dev.locksmith.micrometer;

import dev.locksmith.accounts.OptimisticConflictException;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.exception.DeadlockException;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.exception.SerializationFailureException;
import dev.locksmith.observe.Operation;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** What {@link LocksmithMetrics} records into once bound: the registry, its clock and the meters met so far. */
final class Meters {

    /** Why a transaction or compare-and-swap round was retried, as the {@code reason} tag. */
    enum Reason {
        DEADLOCK,
        SERIALIZATION_FAILURE,
        LOCK_NOT_AVAILABLE,
        OPTIMISTIC_CONFLICT,
        OTHER;

        static Reason of(LocksmithException failure) {
            if (failure instanceof DeadlockException) {
                return DEADLOCK;
            }
            if (failure instanceof SerializationFailureException) {
                return SERIALIZATION_FAILURE;
            }
            if (failure instanceof LockNotAvailableException) {
                return LOCK_NOT_AVAILABLE;
            }
            if (failure instanceof OptimisticConflictException) {
                return OPTIMISTIC_CONFLICT;
            }
            return OTHER;
        }

        String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    final MeterRegistry registry;
    final Clock clock;
    private final ConcurrentHashMap<String, JobMeters> queues = new ConcurrentHashMap<>();
    private final Map<TransferStrategy, ByOutcome<Timer>> transfers = new EnumMap<>(TransferStrategy.class);
    private final ByOutcome<Timer> acquire;
    private final Counter acquireTimeouts;
    private final ConcurrentHashMap<String, ByOutcome<Timer>> lockWaits = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Reason, Counter> retries = new ConcurrentHashMap<>();
    private final Counter deadlocks;
    private final Counter lockTimeouts;

    Meters(MeterRegistry registry) {
        this.registry = registry;
        this.clock = registry.config().clock();
        for (TransferStrategy strategy : TransferStrategy.values()) {
            String tag = strategy.name().toLowerCase(Locale.ROOT);
            transfers.put(
                    strategy,
                    new ByOutcome<>(outcome -> Timer.builder("locksmith.transfers")
                            .description("Accounts.transfer calls, all attempts included, by strategy and outcome")
                            .tag("strategy", tag)
                            .tag("outcome", outcome)
                            .register(registry)));
        }
        this.acquire = new ByOutcome<>(outcome -> Timer.builder("locksmith.pool.acquire")
                .description("ChannelAccountPool.acquire calls, their bounded wait included, by outcome")
                .tag("outcome", outcome)
                .register(registry));
        // Untagged counters exist from the start, so that a rate over them starts at zero.
        this.acquireTimeouts = Counter.builder("locksmith.pool.acquire.timeouts")
                .description("Acquisitions whose bounded wait ended without an idle account")
                .register(registry);
        this.deadlocks = Counter.builder("locksmith.locks.deadlocks")
                .description("Statements chosen as deadlock victims (once per failure, retried or not)")
                .register(registry);
        this.lockTimeouts = Counter.builder("locksmith.locks.timeouts")
                .description("Locks not available: bounded waits that ran out, NOWAIT on a held lock")
                .register(registry);
    }

    /** The job meters of {@code queue}. */
    JobMeters queue(String queue) {
        JobMeters meters = queues.get(queue);
        return meters != null ? meters : queues.computeIfAbsent(queue, q -> new JobMeters(registry, q));
    }

    /** Records the duration of an operation that ended in {@code slot} (see {@link ByOutcome}). */
    void timed(Operation operation, int slot, long nanos) {
        timer(operation, slot).record(nanos, TimeUnit.NANOSECONDS);
        if (operation instanceof Operation.AcquireAccount && slot == ByOutcome.TIMED_OUT) {
            acquireTimeouts.increment();
        }
    }

    private Timer timer(Operation operation, int slot) {
        if (operation instanceof Operation.HandleJobs handle) {
            return queue(handle.queue()).kind(handle.kind()).handler.get(slot);
        }
        if (operation instanceof Operation.ClaimJobs claim) {
            return queue(claim.queue()).claim.get(slot);
        }
        if (operation instanceof Operation.CompleteJobs complete) {
            return queue(complete.queue()).complete.get(slot);
        }
        if (operation instanceof Operation.FailJob fail) {
            return queue(fail.job().queue()).fail.get(slot);
        }
        if (operation instanceof Operation.Transfer transfer) {
            return Objects.requireNonNull(transfers.get(transfer.strategy())).get(slot);
        }
        if (operation instanceof Operation.AcquireAccount) {
            return acquire.get(slot);
        }
        if (operation instanceof Operation.LockRows lock) {
            ByOutcome<Timer> waits = lockWaits.get(lock.table());
            if (waits == null) {
                waits = lockWaits.computeIfAbsent(lock.table(), this::lockWaitTimers);
            }
            return waits.get(slot);
        }
        throw new IllegalArgumentException("unknown operation " + operation.name());
    }

    private ByOutcome<Timer> lockWaitTimers(String table) {
        return new ByOutcome<>(outcome -> Timer.builder("locksmith.locks.wait")
                .description("Row locks taken under a LockWait, waits included, by outcome")
                .tag("table", table)
                .tag("outcome", outcome)
                .register(registry));
    }

    /** Counts a retry. */
    void retried(LocksmithException failure) {
        Reason reason = Reason.of(failure);
        Counter counter = retries.get(reason);
        if (counter == null) {
            counter = retries.computeIfAbsent(
                    reason,
                    r -> Counter.builder("locksmith.retries")
                            .description(
                                    "Transactions and compare-and-swap rounds tried again, by why the last one failed")
                            .tag("reason", r.tag())
                            .register(registry));
        }
        counter.increment();
    }

    /** Counts a deadlock or a lock not available. */
    void lockFailed(LocksmithException failure) {
        if (failure instanceof DeadlockException) {
            deadlocks.increment();
        } else if (failure instanceof LockNotAvailableException) {
            lockTimeouts.increment();
        }
    }
}

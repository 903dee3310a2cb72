package dev.locksmith.jobs;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How deep one queue is, as {@link JobQueue#depth(String, int)} measures it cheaply: live jobs
 * counted up to a cap, and the age of the oldest due job.
 *
 * @param queue the queue
 * @param pending pending jobs (due or not), at most {@code cap}
 * @param running running (leased) jobs, at most {@code cap}
 * @param cap the count at which counting stopped: a count equal to it means "at least this many"
 * @param oldestDuePendingAge how long the oldest due pending job has been due; empty when none is
 */
public record QueueDepth(String queue, long pending, long running, int cap, Optional<Duration> oldestDuePendingAge) {

    /**
     * Checks the values.
     *
     * @param queue the queue; not null
     * @param pending zero or more
     * @param running zero or more
     * @param cap positive
     * @param oldestDuePendingAge not null
     * @throws IllegalArgumentException for a negative count or a cap below 1
     */
    public QueueDepth {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(oldestDuePendingAge, "oldestDuePendingAge");
        if (pending < 0 || running < 0 || cap < 1) {
            throw new IllegalArgumentException(
                    "counts must not be negative and cap must be positive: " + pending + ", " + running + ", " + cap);
        }
    }
}

package dev.locksmith.jobs;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Counts for one queue.
 *
 * @param queue the queue
 * @param counts rows per status (statuses with no rows are absent)
 * @param oldestDuePendingAge how long the oldest claimable pending job has been due
 */
public record QueueStats(String queue, Map<JobStatus, Long> counts, Optional<Duration> oldestDuePendingAge) {

    /**
     * Copies the counts; nothing is null.
     *
     * @param queue the queue; not null
     * @param counts rows per status, copied
     * @param oldestDuePendingAge age of the oldest pending job that is due, if any
     * @throws NullPointerException when an argument is null
     */
    public QueueStats {
        Objects.requireNonNull(queue, "queue");
        counts = Map.copyOf(counts);
        Objects.requireNonNull(oldestDuePendingAge, "oldestDuePendingAge");
    }

    /**
     * Rows with one status.
     *
     * @param status the status to count
     * @return how many rows of the queue had it; zero if none
     */
    public long count(JobStatus status) {
        return counts.getOrDefault(status, 0L);
    }
}

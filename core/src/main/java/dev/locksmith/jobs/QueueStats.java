package dev.locksmith.jobs;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * Counts for one queue.
 *
 * @param queue the queue
 * @param counts rows per status (statuses with no rows are absent)
 * @param oldestDuePendingAge how long the oldest claimable pending job has been due
 */
public record QueueStats(String queue, Map<JobStatus, Long> counts, Optional<Duration> oldestDuePendingAge) {

    /** Rows with {@code status}, zero if none. */
    public long count(JobStatus status) {
        return counts.getOrDefault(status, 0L);
    }
}

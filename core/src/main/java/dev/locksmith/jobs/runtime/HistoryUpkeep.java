package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.engine.Maintenance;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * A worker's care of the history table's partitions: when the worker starts and then once an
 * hour, on its maintenance thread, the partitions of {@code job_history} for today and the next
 * {@value #DAYS_AHEAD} days (UTC) are created if missing, so that jobs finishing at midnight find
 * their day's partition, and retention can drop whole days. Every worker does it; the engine
 * serializes them, and a pass that finds every partition there costs one catalog read.
 */
final class HistoryUpkeep implements Runnable {

    /** Days after today whose partitions are made ahead. */
    static final int DAYS_AHEAD = 3;

    /** How often the partitions are checked. */
    static final Duration INTERVAL = Duration.ofHours(1);

    private final Maintenance maintenance;
    private final String queueName;
    private final Logger log;
    private final RepeatedFailures failures;

    HistoryUpkeep(Maintenance maintenance, String queueName, Logger log) {
        this.maintenance = maintenance;
        this.queueName = queueName;
        this.log = log;
        this.failures =
                new RepeatedFailures(log, "creating the job history's partitions (worker of queue " + queueName + ")");
    }

    @Override
    public void run() {
        try {
            int created = maintenance.prepareHistory(DAYS_AHEAD);
            if (created > 0) {
                log.debug("created {} partitions of the job history (worker of queue {})", created, queueName);
            }
            failures.succeeded();
        } catch (RuntimeException e) {
            // a role that may not create tables fails every time
            failures.failed(
                    e,
                    "could not create the job history's partitions (worker of queue {}); finished jobs go to "
                            + "its default partition meanwhile, which retention empties row by row instead of "
                            + "dropping whole days; retried in {} min",
                    queueName,
                    INTERVAL.toMinutes());
        }
    }
}

package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.engine.Generations;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * A worker's turn of the jobs table's generations ({@link Generations}): every
 * {@link #INTERVAL}, on its maintenance thread, drained partitions are emptied by TRUNCATE and
 * the current generation moves on once its partition is full, so that the rows claims and
 * completions leave dead leave the claim's path even while the MVCC horizon is held. Every worker
 * does it; the engine makes that safe. A step that finds nothing to do costs one catalog read.
 * A role that may not TRUNCATE the partitions turns it off, with a warning: the queue then
 * depends on VACUUM, as a table that is not partitioned does.
 */
final class GenerationUpkeep implements Runnable {

    /** How often a step runs: a generation lasts a few seconds at 1,000 jobs a second while the horizon is held. */
    static final Duration INTERVAL = Duration.ofMillis(250);

    private final Generations generations;
    private final String queueName;
    private final Logger log;
    private final RepeatedFailures failures;
    private volatile boolean checked;
    private volatile boolean off;

    GenerationUpkeep(Generations generations, String queueName, Logger log) {
        this.generations = generations;
        this.queueName = queueName;
        this.log = log;
        this.failures =
                new RepeatedFailures(log, "turning the jobs table's generations (worker of queue " + queueName + ")");
    }

    @Override
    public void run() {
        if (off) {
            return;
        }
        try {
            if (!checked) {
                if (generations.partitioned() && !generations.mayTurn()) {
                    off = true;
                    log.warn(
                            "this worker's database role (queue {}) may not TRUNCATE the partitions of the jobs table "
                                    + "(jobs_slot0 to jobs_slot{}) or UPDATE the sequence job_generation: the worker does "
                                    + "not turn its generations, and the queue depends on VACUUM alone, which a held MVCC "
                                    + "horizon stops; grant TRUNCATE on them and UPDATE on it",
                            queueName,
                            Generations.SLOTS - 1);
                    return;
                }
                checked = true;
            }
            Generations.Step step = generations.step();
            if (step.truncated() > 0 || step.moved() > 0 || step.advanced() || step.analyzed()) {
                log.debug(
                        "jobs table generations (worker of queue {}): {} partitions emptied, {} jobs moved, "
                                + "generation {}{}{}",
                        queueName,
                        step.truncated(),
                        step.moved(),
                        step.generation(),
                        step.analyzed() ? " (its partition analyzed)" : "",
                        step.advanced() ? " (moved on)" : "");
            }
            failures.succeeded();
        } catch (RuntimeException e) {
            failures.failed(e, "turning the jobs table's generations failed (worker of queue {}); retried", queueName);
        }
    }
}

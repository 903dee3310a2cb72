package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.engine.Maintenance;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * A worker's vacuum of the jobs table: at most once per interval, whichever of the worker's
 * threads calls {@link #runIfDue()} first looks at the table's dead rows and vacuums it when
 * there are {@link #MIN_DEAD_ROWS} or more.
 *
 * <p>Why a worker vacuums at all: every claim deletes or updates a row, so a busy queue makes
 * thousands of dead rows a second, and claims slow down as they step over them. Autovacuum
 * visits a database at most once per {@code autovacuum_naptime} (a minute by default), or never
 * where it is off. Measured on this project's benchmark (10 minutes, autovacuum off), the
 * transactional worker's last minute ran at 0.11 of its first without vacuum and at 0.91 with
 * this one. The check is one cheap read of the statistics; the VACUUM runs on the calling
 * thread, which meanwhile does no other work, and uses the connection that thread would use.
 */
final class QueueVacuum {

    /** Fewer dead rows than this are left to autovacuum: a VACUUM would cost more than they do. */
    static final long MIN_DEAD_ROWS = 10_000;

    private final Maintenance maintenance;
    private final Due due;
    private final Logger log;
    private final String queueName;
    private final RepeatedFailures failures;
    private volatile boolean off;

    /**
     * @param interval how often to check; zero turns the vacuum off
     */
    QueueVacuum(Maintenance maintenance, String queueName, Duration interval, Logger log) {
        this.maintenance = maintenance;
        this.queueName = queueName;
        this.due = new Due(interval, false);
        this.log = log;
        this.failures = new RepeatedFailures(log, "vacuum of the jobs table of queue " + queueName);
        this.off = interval.isZero();
    }

    /** Checks, and vacuums if needed, when a check is due and no other thread took it; else returns at once. */
    void runIfDue() {
        if (off) {
            return;
        }
        if (!due.take()) {
            return;
        }
        long started = System.nanoTime();
        try {
            Maintenance.VacuumCheck check = maintenance.vacuumIfDead(MIN_DEAD_ROWS);
            if (check.notOwner()) {
                off = true;
                log.warn(
                        "the jobs table of queue {} has {} dead rows, but this worker's database role does not own "
                                + "it and cannot VACUUM it; the worker stops trying: make sure autovacuum (or a "
                                + "scheduled VACUUM by the owner) keeps up",
                        queueName,
                        check.deadRows());
            } else if (check.vacuumed()) {
                log.debug(
                        "ran VACUUM on the jobs table of queue {} ({} dead rows; skipped if another one ran) in {} ms",
                        queueName,
                        check.deadRows(),
                        Duration.ofNanos(System.nanoTime() - started).toMillis());
            }
            failures.succeeded();
        } catch (RuntimeException e) {
            // a pool whose connections do not auto-commit, for instance, fails every time (VACUUM
            // cannot run in a transaction)
            failures.failed(
                    e,
                    "vacuum of the jobs table of queue {} failed; retried in {} s",
                    queueName,
                    due.interval().toSeconds());
        }
    }
}

package dev.locksmith.jobs;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.runtime.TransactionalMode;
import java.util.Objects;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link BatchJobHandler} in transactional mode: each of N threads repeatedly opens a
 * transaction, claims up to {@code batchSize} jobs with
 * {@link JobQueue#claimInTransaction(DSLContext, Claim)}, hands them to the handler, and commits.
 * Exactly once for work done in the same database; no leases, heartbeats or rescue are needed,
 * because a crashed worker's transaction simply rolls back. {@link Job#attempts()} of a job in
 * hand counts the attempt now running, as in the other modes: 1 on its first run.
 *
 * <p>Batching is the throughput lever: one round trip claims many jobs, and a batch commits as a
 * whole. When the handler throws, the batch's transaction rolls back (every job is back in the
 * queue, nothing of the handler's work remains) and the thread then <em>isolates</em> jobs: it
 * claims its next batches as usual but hands the handler one job at a time, each under a
 * savepoint. A job whose handler throws there is rolled back to its savepoint and written back
 * with its attempt counted, the error in {@code last_error} and a {@code run_at} after the retry
 * backoff ({@link JobQueueConfig#retryBackoff()}), or as {@code failed} once it has used
 * {@code max_attempts}; the rest of the batch commits. The thread returns to whole batches after
 * a batch with no failure. So a poison job costs each thread that meets it one rolled-back batch
 * per attempt, is retried with backoff, and ends {@code failed}. {@link Builder#isolateEachJob}
 * isolates every batch (two extra round trips per job: {@code SAVEPOINT} and
 * {@code RELEASE SAVEPOINT}).
 *
 * <p>A handler that throws a {@link JobControl} (snooze, retry after a delay, fail permanently,
 * cancel) takes the same path: when it was handed one job under a savepoint, the job is written
 * back as the control asks; when it was handed a whole batch, the batch rolls back (logged at
 * DEBUG, not as a failure) and the thread isolates jobs, so that the handler meets the job again
 * alone and the control applies to it. A handler that often snoozes or cancels jobs is best run
 * with {@link Builder#isolateEachJob} or a batch size of one, to spare those rolled-back batches.
 *
 * <p>Jobs with an {@linkplain NewJob.Builder#orderingKey(String) ordering key} are claimed only
 * as the head of their key ({@link JobQueue}, "Per-key ordering"), so a batch holds at most one
 * job per key, and the next job of a key becomes claimable when the batch that holds its
 * predecessor commits; a thread whose batch held keyed jobs therefore claims again at once
 * instead of waiting for a notification.
 *
 * <p>Each thread holds one connection while it works; with {@code listen} on, one more is held
 * for {@code LISTEN}: the data source must allow {@code threads + 1} connections. Every few
 * seconds one thread, between its batches, looks at the jobs table's dead rows and vacuums it
 * when there are many ({@link WorkerBuilder#vacuumInterval}).
 *
 * <p>A thread survives anything the handler throws, {@link Error}s included; a failure of the
 * worker's own loop is logged at ERROR, and {@link #liveThreads()} tells how many threads still
 * run. Idle threads wait for a NOTIFY, and poll regardless. {@link #close()} lets each thread's
 * batch commit or roll back within the shutdown grace, then interrupts the handlers and waits as
 * long again; a batch whose handler ignores the interrupt keeps its transaction, and so its jobs
 * (no other worker can claim them), until it ends or the JVM exits, and {@code close()} reports
 * its thread (logged at WARN, counted by {@link #liveThreads()}).
 */
public final class TransactionalWorker extends RuntimeWorker {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionalWorker.class);

    private final TransactionalMode mode;

    private TransactionalWorker(Builder b) {
        super(b, b.runtime(LOG, 0));
        this.mode = new TransactionalMode(runtime, b.handler, b.batchSize, b.isolateEachJob);
    }

    /**
     * A builder for a worker on {@code queue} of {@code jobs}, in its environment and with its
     * settings (retry backoff).
     *
     * @param jobs the queue: its environment's data source gives each thread's connection (and
     *     the LISTEN connection), {@code threads + 1} at once
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the work for each batch, called on the worker's threads
     * @return a builder with the defaults: 4 threads, batches of 10, 1 s poll, LISTEN on
     * @throws IllegalArgumentException for an invalid queue name, or an environment whose connections
     *     do not come from a {@code DataSource} (a worker holds connections of its own)
     */
    public static Builder builder(JobQueue jobs, String queue, BatchJobHandler handler) {
        return new Builder(jobs, queue, handler);
    }

    /**
     * A builder with every default environment and queue setting, its connections from
     * {@code dataSource}: {@code builder(new JobQueue(Locksmith.of(dataSource)), queue, handler)}.
     *
     * @param dataSource where each thread's connection (and the LISTEN connection) comes from
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the work for each batch
     * @return a builder with the defaults of {@link #builder(JobQueue, String, BatchJobHandler)}
     * @throws IllegalArgumentException for an invalid queue name, or an environment whose connections
     *     do not come from a {@code DataSource} (a worker holds connections of its own)
     */
    public static Builder builder(DataSource dataSource, String queue, BatchJobHandler handler) {
        return builder(new JobQueue(Locksmith.of(dataSource)), queue, handler);
    }

    /**
     * A builder whose transactions run on {@code dsl}, with every default queue setting:
     * {@code builder(new JobQueue(dsl), queue, handler)}. Your jOOQ configuration (settings,
     * listeners, transaction provider) applies to its transactions.
     *
     * @param dsl your context, or {@link Locksmith#dsl()}
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the work for each batch
     * @return a builder with the defaults of {@link #builder(JobQueue, String, BatchJobHandler)}
     * @throws IllegalArgumentException for an invalid queue name, or an environment whose connections
     *     do not come from a {@code DataSource} (a worker holds connections of its own)
     */
    public static Builder builder(DSLContext dsl, String queue, BatchJobHandler handler) {
        return builder(new JobQueue(dsl), queue, handler);
    }

    /**
     * Starts the threads; returns at once.
     *
     * @return this worker, running
     * @throws IllegalStateException when the data source's pool is known to allow fewer than
     *     {@code threads + 1} connections ({@code threads} without LISTEN), or when it was
     *     started before
     */
    @Override
    public TransactionalWorker start() {
        runtime.start(mode);
        return this;
    }

    /** Builds a {@link TransactionalWorker}: the settings of {@link WorkerBuilder}, and batches. */
    public static final class Builder extends WorkerBuilder<Builder> {
        private final BatchJobHandler handler;
        private int batchSize = 10;
        private boolean isolateEachJob;

        private Builder(JobQueue jobs, String queue, BatchJobHandler handler) {
            super(jobs, queue);
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        @Override
        Builder self() {
            return this;
        }

        /**
         * Jobs claimed per transaction; default 10. Larger batches save round trips but hold
         * their rows (and the handler's locks) longer, and a failing batch rolls back more work.
         *
         * @param batchSize 1 to {@value Claim#MAX_LIMIT}
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > Claim.MAX_LIMIT) {
                throw new IllegalArgumentException(
                        "batchSize must be between 1 and " + Claim.MAX_LIMIT + ", was " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /**
         * Hand every job to the handler alone under its own savepoint, not only after a failed
         * batch (default false). Costs two round trips per job; see the class description.
         *
         * @param isolateEachJob true to isolate every job of every batch
         * @return this builder
         */
        public Builder isolateEachJob(boolean isolateEachJob) {
            this.isolateEachJob = isolateEachJob;
            return this;
        }

        /**
         * The worker, not yet started.
         *
         * @return a new worker; call {@link TransactionalWorker#start()}
         * @throws IllegalArgumentException for shards out of range, or an environment whose
         *     connections do not come from a {@code DataSource}
         * @throws IllegalStateException for LISTEN wake-ups under {@code PoolingMode.TRANSACTION}
         */
        @Override
        public TransactionalWorker build() {
            return new TransactionalWorker(this);
        }
    }
}

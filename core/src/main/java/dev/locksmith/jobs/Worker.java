package dev.locksmith.jobs;

/**
 * A running consumer of one queue: {@link JobWorker} (leased: at least once, for side effects
 * outside the database), {@link TransactionalWorker} (exactly once for work in the same database)
 * or {@link TwoPhaseWorker} (exactly once for a side effect through two-phase commit). All three
 * are one runtime with one loop: the same threads, wake-up by {@code NOTIFY} with polling, vacuum
 * of the jobs table, and shutdown; they differ in how a job is claimed, run and settled. Built by
 * their builders ({@link WorkerBuilder}), whose shared settings have the same names and defaults.
 *
 * <p>Thread-safe. {@link #close()} is idempotent and waits a bounded time
 * ({@link WorkerBuilder#shutdownGrace}, twice): what it could not stop it reports (logged at WARN,
 * and counted by {@link #liveThreads()}) and leaves safe, so that no job ever runs twice at once.
 */
public interface Worker extends AutoCloseable {

    /**
     * Starts the worker's threads; returns at once.
     *
     * @return this worker, running
     * @throws IllegalStateException when the data source's pool is known to allow fewer connections
     *     than the worker needs, a requirement of its mode is not met (two-phase: the server's
     *     {@code max_prepared_transactions}), or it was started before
     */
    Worker start();

    /**
     * Stops claiming and lets the jobs in hand end within the shutdown grace; see each worker for
     * what happens to a job whose handler outlives it. Returns when the worker's threads have
     * stopped, or after the grace (twice) with the threads that did not stop logged at WARN.
     */
    @Override
    void close();

    /** {@return the queue this worker works} */
    String queue();

    /** {@return this worker's id, in logs and, for a leased worker, in {@code jobs.locked_by}} */
    String workerId();

    /**
     * Threads of this worker running now: its claiming loops and the handlers running a job. Zero
     * before {@link #start()} and after a clean {@link #close()}; after a {@code close()} that gave
     * up on handlers that ignored their interrupt, those handlers (their jobs stay theirs until
     * they end).
     *
     * @return the count
     */
    int liveThreads();

    /**
     * Jobs this worker settled so far: completed, or an attempt's end recorded (retry scheduled,
     * failed for good, snoozed, cancelled); a transactional worker counts a batch once it commits.
     *
     * @return the count
     */
    long processed();
}

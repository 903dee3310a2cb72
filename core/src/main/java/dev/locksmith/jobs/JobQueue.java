package dev.locksmith.jobs;

import dev.locksmith.Locksmith;
import dev.locksmith.internal.Environment;
import dev.locksmith.internal.Observing;
import dev.locksmith.jobs.engine.QueueEngine;
import dev.locksmith.jobs.engine.Sql;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jspecify.annotations.Nullable;

/**
 * A PostgreSQL job queue over the {@code jobs} table, claiming with {@code FOR UPDATE SKIP
 * LOCKED} so that concurrent workers never wait on each other's rows and never take the same
 * job. Two ways to consume:
 *
 * <ul>
 *   <li><b>Transactional</b> ({@link #claimInTransaction(DSLContext, Claim)}): the claim deletes
 *       the jobs inside the caller's open transaction; the caller's work and the removal commit
 *       together, and a rollback or a crash puts the jobs back. Exactly once for work done in the
 *       same database. The claimed rows stay locked (invisible to other claimers, who skip them)
 *       until the transaction ends, so keep it short.</li>
 *   <li><b>Leased</b> ({@link #claim(Claim, Duration, String)}): one statement moves jobs to
 *       {@code running} with a lease ({@code locked_until = now() + lease}); the worker then
 *       {@linkplain #complete completes}, {@linkplain #fail fails} (retried with exponential
 *       backoff up to {@code max_attempts}) or {@linkplain #heartbeat extends} it. A lease that
 *       expires is returned to {@code pending} by {@link #rescueExpired()}. At least once: use it
 *       for side effects outside the database, and make them idempotent.</li>
 * </ul>
 *
 * <p>Every lease transition checks ownership: each leased claim writes a new random
 * {@code lease_id} ({@link Job#leaseId()}), and a transition applies only while the row is
 * running with that lease id.
 * A worker whose lease expired and was rescued gets {@code false} / {@link FailResult.Outcome#LEASE_LOST},
 * never a silent success.
 *
 * <p><b>Per-key ordering.</b> Jobs of a queue with the same
 * {@linkplain NewJob.Builder#orderingKey(String) ordering key} run one at a time, in enqueue
 * order, in both modes and across every worker; jobs of other keys, and jobs without a key, run in
 * parallel. Every claim takes a keyed job only when it is the <em>head</em> of its key: no pending
 * or running job of the same queue and key has a lower id (one probe of a partial index). So a
 * claim takes at most one job per key, and never blocks: it is the same {@code SKIP LOCKED}
 * statement with one more condition. Why two claims never hold jobs of one key at once:
 * <ul>
 *   <li>A job being worked on is live in every snapshot: {@code running} under a lease, or still
 *       {@code pending} to everyone else while a transactional claim that deleted it has not
 *       committed. Either way the jobs after it are not heads. A claim that finds the head itself
 *       locked skips it ({@code SKIP LOCKED}); one whose snapshot predates the head's claim and
 *       tries to lock it finds the row changed and re-checks it ({@code status} is no longer
 *       {@code pending}, or the row is gone) and leaves it.</li>
 *   <li>A snapshot could still miss a lower id whose enqueue has not committed yet, and take a
 *       later job as the head. That cannot happen, because enqueues of a key are serialized by a
 *       transaction-scoped advisory lock on the key taken before the insert (see
 *       {@link #enqueueAll}): ids within a key follow commit order.</li>
 * </ul>
 * A failed job that is rescheduled stays the head until it succeeds (its key waits for it, through
 * the whole backoff); one that fails for good, or is cancelled, lets the next job of its key go.
 * Priority and delay do not reorder jobs within a key. The exclusion is as strong as the lease: a
 * job whose lease lapses and is rescued can be claimed again while its first run still goes (as
 * without keys), and cancelling a running job lets the next one start while its handler finishes.
 * Cost: one index probe per keyed candidate the claim looks at; a claim also reads past the
 * pending jobs of keys that are busy (they are not heads), so a single key with a deep backlog
 * slows every claim of its queue somewhat: give such a key a queue of its own.
 *
 * <p>All times come from the database clock ({@code now()}), so several JVMs agree. Bad input
 * fails with {@link IllegalArgumentException} or {@link NullPointerException} before anything is
 * written. Thread-safe; share one instance.
 *
 * <p>The hot statements are rendered once, at construction, with the settings of the
 * {@code DSLContext} given here, and run on the connection of the {@code DSLContext} passed to
 * each call, through its jOOQ configuration (so its {@code ExecuteListener}s see them), or
 * straight through JDBC when the {@code DSLContext} given here says
 * {@link dev.locksmith.ExecutionMode#RAW_JDBC} (docs/operations.md, "Execution modes").
 *
 * <p><b>Citus.</b> When Citus distributes the jobs table by {@code shard} (the schema's Citus
 * layout), a queue finds out at its first claim or enqueue (one catalog read, kept for the
 * queue's life) and then: places a job given shard 0 on a random shard, or, with a unique,
 * ordering or concurrency key, on the shard its queue and key hash to, so that a key's jobs share
 * a shard;
 * claims shard by shard, each claim a single-shard statement (Citus refuses {@code FOR UPDATE}
 * across shards), starting at a random shard; and judges a keyed job's predecessors on its own
 * shard. {@link #claimInTransaction(DSLContext, Claim)} takes its jobs from one shard, so that
 * the caller's transaction commits on one node (docs/citus.md).
 */
public final class JobQueue {

    /** The {@code LISTEN}/{@code NOTIFY} channel; the payload is the queue name. */
    public static final String CHANNEL = Sql.CHANNEL;

    private final JobQueueConfig config;
    private final QueueEngine engine;

    /**
     * A queue in {@code locksmith}'s environment with {@link JobQueueConfig#defaults()}.
     *
     * @param locksmith the environment: schema, execution mode, observer
     */
    public JobQueue(Locksmith locksmith) {
        this(locksmith.dsl());
    }

    /**
     * A queue in {@code locksmith}'s environment with other settings.
     *
     * @param locksmith the environment: schema, execution mode, observer
     * @param config retention of completed jobs, NOTIFY on enqueue, retry backoff, codec
     */
    public JobQueue(Locksmith locksmith, JobQueueConfig config) {
        this(locksmith.dsl(), config);
    }

    /**
     * A queue on {@code dsl} with {@link JobQueueConfig#defaults()}.
     *
     * @param dsl runs the operations that open their own transactions, and its settings (schema
     *     mapping, dialect) are what the statements are rendered with
     */
    public JobQueue(DSLContext dsl) {
        this(dsl, JobQueueConfig.defaults());
    }

    /**
     * A queue on {@code dsl} with other settings.
     *
     * @param dsl runs the operations that open their own transactions, and its settings (schema
     *     mapping, dialect) are what the statements are rendered with
     * @param config retention of completed jobs, NOTIFY on enqueue, retry backoff
     */
    public JobQueue(DSLContext dsl, JobQueueConfig config) {
        Objects.requireNonNull(dsl, "dsl");
        this.config = Objects.requireNonNull(config, "config");
        this.engine = new QueueEngine(Environment.listening(dsl), config, Observing.of(dsl), Job::new, Job::row);
    }

    /** {@return the settings in force, as given at construction} */
    public JobQueueConfig config() {
        return config;
    }

    /**
     * Enqueues {@code job} in the caller's transaction (or auto-commits when there is none).
     * With a unique key that a live job of the queue already has, nothing is inserted and the
     * existing job's id is returned; concurrent enqueues of the same key race safely on the
     * partial unique index: the second waits until the first's transaction ends, then inserts or
     * returns the first's job. Workers listening on {@value #CHANNEL} are woken once it committed, as
     * {@link JobQueueConfig#wakeUp()} says: by default by a {@code NOTIFY} sent after the commit on
     * a connection of the queue's own, so that producers' commits never wait for each other.
     *
     * @param tx the caller's transaction (or an auto-commit context); the job becomes visible to
     *     workers when it commits
     * @param job the job to enqueue
     * @return the new job's id, or the existing live job's id
     */
    public long enqueue(DSLContext tx, NewJob job) {
        return enqueueAll(tx, List.of(Objects.requireNonNull(job, "job"))).get(0);
    }

    /**
     * Enqueues a typed job on its type's queue, with every other field at its default, as
     * {@link #enqueue(DSLContext, NewJob)} does.
     *
     * @param tx the caller's transaction (or an auto-commit context)
     * @param type the job type: queue, kind and payload class
     * @param payload the payload, encoded by {@link JobQueueConfig#codec()}
     * @param <T> the payload type
     * @return the new job's id
     * @throws IllegalArgumentException when the payload cannot be encoded, or encodes to more than
     *     {@link NewJob#MAX_PAYLOAD_BYTES}; nothing is written then
     */
    public <T> long enqueue(DSLContext tx, JobType<T> type, T payload) {
        return enqueue(tx, newJob(type, payload).build());
    }

    /**
     * A builder for a typed job, its payload encoded by {@link JobQueueConfig#codec()}, to set
     * the other fields (priority, delay, unique or ordering key) before
     * {@link #enqueue(DSLContext, NewJob)} or {@link #enqueueAll}.
     *
     * @param type the job type: queue, kind and payload class
     * @param payload the payload; an instance of the type's payload class
     * @param <T> the payload type
     * @return a builder with the type's queue, kind and the encoded payload
     * @throws IllegalArgumentException when the payload cannot be encoded
     */
    public <T> NewJob.Builder newJob(JobType<T> type, T payload) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(payload, "payload");
        if (!type.payloadType().isInstance(payload)) {
            throw new IllegalArgumentException("payload of kind " + type.kind() + " must be a "
                    + type.payloadType().getName() + ", was a "
                    + payload.getClass().getName());
        }
        String json;
        try {
            json = config.codec().encode(payload);
        } catch (IllegalStateException noCodec) {
            throw noCodec;
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(
                    "payload of kind " + type.kind() + " could not be encoded: " + e.getMessage(), e);
        }
        return NewJob.builder(type.queue(), type.kind()).payload(json);
    }

    /**
     * Enqueues {@code jobs} with one multi-row {@code INSERT} in the caller's transaction, with
     * the same unique-key and NOTIFY behaviour as {@link #enqueue(DSLContext, NewJob)} (one NOTIFY
     * per queue).
     *
     * <p>Jobs with an {@linkplain NewJob#orderingKey() ordering key} first lock their keys until the
     * caller's transaction ends (transaction-scoped advisory locks, one statement; with more than
     * 32 distinct keys of a queue in one call, one lock on the queue's keyed enqueues instead):
     * another producer of the same key waits until this transaction commits or rolls back, so
     * that within a key, ids (the order in which jobs run) follow commit order. Keep transactions
     * that enqueue keyed jobs short. One call takes its locks in a fixed order and cannot deadlock
     * with another call; a transaction that enqueues keys over several calls can, with a
     * transaction that takes them in another order ({@link dev.locksmith.exception.DeadlockException}, which
     * {@link dev.locksmith.RetryPolicy} retries). In auto-commit mode the call runs in a
     * transaction of its own.
     *
     * @param tx the caller's transaction (or an auto-commit context)
     * @param jobs the jobs, no nulls; empty sends nothing
     * @return one id per job, in the order given (existing ids for live duplicates of a unique key)
     */
    public List<Long> enqueueAll(DSLContext tx, List<NewJob> jobs) {
        return engine.enqueue.enqueueAll(tx, jobs);
    }

    /**
     * {@link #claimInTransaction(DSLContext, Claim)} of up to {@code n} jobs of {@code queue}, from
     * any shard.
     *
     * @param tx the caller's open transaction
     * @param queue the queue, 1 to 128 characters
     * @param n at most this many jobs, 1 to {@value Claim#MAX_LIMIT}
     * @return the claimed jobs in claim order; empty when nothing is claimable right now
     * @throws IllegalStateException when {@code tx} is in auto-commit mode
     */
    public List<Job> claimInTransaction(DSLContext tx, String queue, int n) {
        return claimInTransaction(tx, Claim.of(queue, n));
    }

    /**
     * Deletes and returns up to {@code claim.limit()} due jobs in the caller's open transaction:
     * {@code DELETE FROM jobs WHERE id = ANY(ARRAY(SELECT id ... ORDER BY priority, run_at, id
     * LIMIT n FOR UPDATE SKIP LOCKED)) RETURNING *}. Jobs other transactions are claiming are skipped, not
     * waited for; an empty list means nothing is claimable right now. The deletion commits with
     * the caller's work; a rollback or crash restores the jobs. The claimed rows stay locked
     * until the caller's transaction ends.
     *
     * @param tx the caller's open transaction
     * @param claim which queue, how many, which shards
     * @return the claimed jobs in claim order
     * @throws IllegalStateException when {@code tx} is in auto-commit mode (the claim would commit
     *     before the work)
     */
    public List<Job> claimInTransaction(DSLContext tx, Claim claim) {
        return engine.claims.inTransaction(tx, claim);
    }

    /**
     * {@link #claim(Claim, Duration, String)} of up to {@code n} jobs of {@code queue}, from any
     * shard.
     *
     * @param queue the queue, 1 to 128 characters
     * @param n at most this many jobs, 1 to {@value Claim#MAX_LIMIT}
     * @param lease how long the worker may hold each job before it can be rescued; positive
     * @param workerId recorded as {@code locked_by}, 1 to 128 characters
     * @return the leased jobs in claim order; empty when nothing is claimable right now
     */
    public List<Job> claim(String queue, int n, Duration lease, String workerId) {
        return claim(Claim.of(queue, n), lease, workerId);
    }

    /**
     * Leases up to {@code claim.limit()} due jobs to {@code workerId} in one auto-committed
     * statement: {@code status = 'running'}, {@code locked_until = now() + lease},
     * {@code attempts + 1}. Never waits for rows other claimers hold. No row lock outlives the
     * statement: the lease is the row's state, and it ends by a transition or by expiry.
     *
     * @param claim which queue, how many, which shards
     * @param lease how long the worker may hold each job before it can be rescued; positive, at
     *     most 100 years; extend it with {@link #heartbeat(Job, Duration)}
     * @param workerId recorded as {@code locked_by}, 1 to 128 characters
     * @return the leased jobs in claim order; each is the token for its later transitions
     */
    public List<Job> claim(Claim claim, Duration lease, String workerId) {
        return engine.claims.leased(claim, lease, workerId);
    }

    /**
     * Extends the lease of a job the caller still holds to {@code now() + lease}, in one
     * auto-committed statement. While another transaction is changing the row (completing or
     * cancelling it) it waits for that one to end.
     *
     * @param job the job as the leased claim returned it
     * @param lease the new lease, from now; positive
     * @return false when the lease is gone (rescued, cancelled, completed); nothing changed then
     */
    public boolean heartbeat(Job job, Duration lease) {
        boolean held = engine.leases.extend(job, lease);
        if (!held) {
            engine.leases.lost(job);
        }
        return held;
    }

    /**
     * Completes a leased job in the caller's transaction (so it commits with the caller's
     * writes): deletes it, or, when {@link JobQueueConfig#keepCompleted()}, moves it to the
     * history ({@code job_history}) as {@code done} in the same statement.
     * The row stays locked until the caller's transaction ends, so a concurrent rescue or cancel
     * waits for it.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param job the job as the leased claim returned it
     * @return false when the caller no longer holds the lease; nothing changed then
     * @throws IllegalArgumentException for a job that was not leased (no lease id)
     */
    public boolean complete(DSLContext tx, Job job) {
        return completeAll(tx, List.of(Objects.requireNonNull(job, "job"))) == 1;
    }

    /**
     * Completes many leased jobs with one statement in the caller's transaction; the rows stay
     * locked until it ends.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param jobs the jobs as leased claims returned them; empty sends nothing
     * @return how many were completed; jobs whose lease the caller lost are left alone
     */
    public int completeAll(DSLContext tx, Collection<Job> jobs) {
        return engine.leases.complete(tx, jobs);
    }

    /**
     * Records a failure of a leased job in the caller's transaction: back to {@code pending}
     * after an exponential backoff with jitter ({@link JobQueueConfig#retryBackoff()}), or
     * {@code failed} once {@code max_attempts} is reached. {@code last_error} keeps the message.
     * The row stays locked until the caller's transaction ends.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param job the job as the leased claim returned it
     * @param error why it failed; truncated to 10,000 characters; null is stored as empty
     * @return whether it was rescheduled (and when it is due) or failed for good, or
     *     {@link FailResult.Outcome#LEASE_LOST} with nothing changed
     * @throws IllegalArgumentException for a job that was not leased (no lease id)
     */
    public FailResult fail(DSLContext tx, Job job, @Nullable String error) {
        return engine.settlement.fail(tx, job, error);
    }

    /**
     * Does with a leased job what its handler asked for with a {@link JobControl}, in the caller's
     * transaction: snoozes it (the attempt the claim counted is given back), retries it after the
     * control's delay (failed for good when it was the last attempt), fails it permanently, or
     * cancels it. {@code last_error} keeps the control's reason (a snooze leaves it alone). The row
     * stays locked until the caller's transaction ends. {@link JobWorker} calls this for a handler
     * that throws a control; callers that claim with {@link #claim} call it themselves.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param job the job as the leased claim returned it
     * @param control what to do
     * @return {@link FailResult.Outcome#SNOOZED} or {@code RETRY_SCHEDULED} with the time the job is
     *     due again, {@code FAILED}, {@code CANCELLED}, or {@code LEASE_LOST} with nothing changed
     * @throws IllegalArgumentException for a job that was not leased (no lease id)
     */
    public FailResult settle(DSLContext tx, Job job, JobControl control) {
        return engine.settlement.settle(tx, job, control);
    }

    /**
     * Gives a leased job back without counting the attempt (a worker shutting down): it is
     * {@code pending} again at once. One auto-committed statement.
     *
     * @param job the job as the leased claim returned it
     * @return false when the caller no longer held the lease
     * @throws IllegalArgumentException for a job that was not leased (no lease id)
     */
    public boolean release(Job job) {
        return engine.leases.release(job);
    }

    /**
     * Cancels a pending or running job in the caller's transaction: it moves to the history
     * ({@code job_history}) as {@code cancelled} in one statement. A worker still running it
     * will find its lease gone. The row stays locked until the caller's transaction ends; while
     * a worker's completing transaction holds it, this waits for that one, and then finds the job
     * finished.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param id the job id
     * @return false when the job is already finished or does not exist
     */
    public boolean cancel(DSLContext tx, long id) {
        return engine.admin.cancel(tx, id);
    }

    /**
     * Puts a {@code failed} or {@code cancelled} job back in its queue, in the caller's
     * transaction, moving it from the history into the jobs table with its id in one statement
     * (a concurrent retry of the same job waits, then finds it gone): {@code pending}, due at
     * once ({@code run_at} is the statement's time), its {@code finished_at} cleared, and
     * {@code max_attempts} raised to {@code attempts + 1} when it had used them all, so that it
     * gets one more claim; {@code attempts} and {@code last_error} are kept as a record of what
     * happened. Locks the row until the caller's transaction ends;
     * workers are woken once it committed ({@link JobQueueConfig#wakeUp()}). A job of
     * an {@linkplain NewJob.Builder#orderingKey(String) ordering key} is the head of its key again
     * if no live job of the key has a lower id, and then runs before the key's later jobs.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param id the job id
     * @return false when the job does not exist or is not failed or cancelled (nothing changed)
     * @throws dev.locksmith.exception.UniqueViolationException when the job has a unique key that a live job
     *     of its queue holds now
     */
    public boolean retry(DSLContext tx, long id) {
        return engine.admin.retry(tx, id);
    }

    /**
     * Deletes one finished ({@code done}, {@code failed} or {@code cancelled}) job from the
     * history in the caller's transaction. A live job is left alone: {@linkplain #cancel cancel}
     * it first. Locks the row until the caller's transaction ends.
     *
     * @param tx the caller's transaction; the deletion commits or rolls back with it
     * @param id the job id
     * @return false when the job does not exist or is still pending or running
     */
    public boolean deleteFinished(DSLContext tx, long id) {
        return engine.admin.deleteFinished(tx, id);
    }

    /**
     * Returns running jobs whose lease has expired to {@code pending} (or to {@code failed} when
     * they have used all their attempts), in batches of 1,000 skipping rows being changed right
     * now. Safe to run from every worker at once. Each batch is its own auto-committed statement.
     *
     * @return how many jobs were rescued
     */
    public int rescueExpired() {
        return engine.maintenance.rescueExpired();
    }

    /**
     * Reads a job without locking it; never waits.
     *
     * @param tx the transaction (or auto-commit context) to read in
     * @param id the job id
     * @return the job as of {@code tx}'s snapshot, from the jobs table or, once finished, from the
     *     history ({@code job_history}: one index probe per day partition); empty when its row is
     *     gone (claimed in transactional mode, completed without {@code keepCompleted}, or expired
     *     by retention)
     */
    public Optional<Job> find(DSLContext tx, long id) {
        return engine.reads.find(tx, id);
    }

    /**
     * Expires {@code done}, {@code failed} and {@code cancelled} jobs that finished more than
     * {@code age} ago. Finished jobs are kept in {@code job_history}, partitioned by the UTC day
     * they finished on: every partition whose days all ended more than {@code age} ago is dropped
     * whole (each in its own short transaction, which waits at most two seconds for its locks and
     * is otherwise left for the next call), and the older rows of the partition that straddles the
     * boundary (and of the default partition) are deleted {@code batchSize} rows per
     * auto-committed statement, as are finished rows that a library from before the history table
     * left in {@code jobs}. So no call holds many locks or a long transaction, and expiring a day
     * of history costs a {@code DROP TABLE}, not a delete per row.
     *
     * @param age how long ago a job must have finished (database clock); zero or more
     * @param batchSize rows per statement, 1 to 100,000
     * @return how many rows were deleted: those deleted by statement, plus the rows of the dropped
     *     partitions by the statistics ({@code pg_class.reltuples}, an estimate; 0 for a partition
     *     never analyzed)
     * @throws IllegalArgumentException when {@code age} is negative or {@code batchSize} out of range
     */
    public int deleteFinishedOlderThan(Duration age, int batchSize) {
        return engine.maintenance.deleteFinishedOlderThan(age, batchSize);
    }

    /**
     * Creates the partitions of {@code job_history} for today and the next {@code daysAhead} days
     * (UTC days, by the database clock) that are missing. Workers do this themselves (for three
     * days ahead, once an hour); call it where no worker runs, for example before finishing jobs
     * from a batch process. A job that finishes on a day without a partition lands in the default
     * partition, from which this call moves the day's rows into the day's new partition (locking
     * {@code job_history} against finishing jobs meanwhile). Serialized across callers by a
     * transaction-scoped advisory lock; a partition whose locks are not granted within two seconds
     * is left for the next call. Needs the right to create tables in the schema (the owner's).
     *
     * @param daysAhead days after today, 0 to 31
     * @return how many partitions were created
     * @throws IllegalArgumentException when {@code daysAhead} is out of range
     */
    public int prepareHistory(int daysAhead) {
        return engine.maintenance.prepareHistory(daysAhead);
    }

    /**
     * How big the history of finished jobs is, by the statistics: catalog reads only, the same
     * cost at any size (for gauges; nothing counts the rows).
     *
     * @return the estimated rows and the partitions
     */
    public HistorySize historySize() {
        var estimate = engine.maintenance.historyEstimate();
        return new HistorySize(estimate.value1(), estimate.value2());
    }

    /**
     * Why autovacuum will not clean the jobs table, if it will not: it is off for the server
     * ({@code autovacuum = off}) or for the table ({@code autovacuum_enabled = false}). A queue
     * deletes or updates every row it claims, so without vacuum its dead rows pile up and claims
     * slow down as they skip them. The workers vacuum the table themselves when they find many
     * dead rows (their {@code vacuumInterval}), but nothing else then analyzes or freezes it. The
     * workers log this at WARN when they start (each reason once per process). One read-only
     * statement.
     *
     * @return the reason, or empty when autovacuum runs for the table
     */
    public Optional<String> autovacuumProblem() {
        return engine.maintenance.autovacuumProblem();
    }

    /**
     * Row counts per queue and status of the jobs table, and the age of each queue's oldest due
     * pending job. Two read-only statements on the queue's own {@code DSLContext} (a scan of the
     * hot table); meant for metrics, not for every request. Finished jobs live in the history
     * ({@code job_history}), which this does not count (a count there grows with the history):
     * {@code done}, {@code failed} and {@code cancelled} counts are only of finished rows a library
     * from before the history table left in {@code jobs}. See {@link #historySize()}.
     *
     * @return one entry per queue that has rows, ordered by queue name
     */
    public List<QueueStats> stats() {
        return engine.reads.stats();
    }

    /**
     * How deep {@code queue} is, measured with work bounded by {@code cap} whatever the table
     * holds, for gauges polled every few seconds: pending jobs counted on the claim index
     * ({@code jobs_claimable_idx}, index-only where the visibility map allows) up to {@code cap},
     * running jobs counted on the lease index up to {@code cap}, and the age of the oldest due
     * pending job found with two index probes per distinct priority of the queue's pending jobs.
     * One read-only statement on the queue's own {@code DSLContext}; takes no lock.
     *
     * @param queue the queue, 1 to 128 characters
     * @param cap stop counting at this many, 1 to 1,000,000
     * @return the counts (each at most {@code cap}) and the oldest due job's age
     * @throws IllegalArgumentException for an invalid queue name or a cap out of range
     */
    public QueueDepth depth(String queue, int cap) {
        return engine.reads.depth(queue, cap);
    }

    /**
     * The concurrency limits per key of this database's queues ({@link NewJob.Builder#concurrencyKey(String)}):
     * rows of {@code job_concurrency_limits}, which every JVM's claims read.
     *
     * @return the limits, read and written in the caller's transaction
     */
    public ConcurrencyLimits concurrencyLimits() {
        return new ConcurrencyLimits(engine.limits);
    }

    /**
     * The rate limits per key of this database's queues ({@link NewJob.Builder#concurrencyKey(String)}):
     * how many jobs of a key may start in a window of time, in the same rows as the concurrency
     * limits.
     *
     * @return the rates, read and written in the caller's transaction
     */
    public RateLimits rateLimits() {
        return new RateLimits(engine.limits);
    }

    /** The environment this queue was built in, for the workers built from it. */
    Environment environment() {
        return Environment.of(engine.dsl());
    }

    /** The engine behind this queue, for the workers built from it. */
    QueueEngine engine() {
        return engine;
    }
}

package dev.locksmith.jobs;

import static dev.locksmith.codegen.Tables.JOBS;

import dev.locksmith.codegen.tables.records.JobsRecord;
import dev.locksmith.internal.Binds;
import dev.locksmith.internal.Distribution;
import dev.locksmith.internal.Durations;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.Observing;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.internal.Texts;
import dev.locksmith.internal.TransactionGuard;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.types.DayToSecond;
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
 * {@link dev.locksmith.ExecutionMode#RAW_JDBC} (README, "Execution modes").
 *
 * <p><b>Citus.</b> When Citus distributes the jobs table by {@code shard} (the schema's Citus
 * layout), a queue finds out at its first claim or enqueue (one catalog read, kept for the
 * queue's life) and then: places a job given shard 0 on a random shard, or, with a unique or
 * ordering key, on the shard its queue and key hash to, so that a key's jobs share a shard;
 * claims shard by shard, each claim a single-shard statement (Citus refuses {@code FOR UPDATE}
 * across shards), starting at a random shard; and judges a keyed job's predecessors on its own
 * shard. {@link #claimInTransaction(DSLContext, Claim)} takes its jobs from one shard, so that
 * the caller's transaction commits on one node (README, "Scaling out on Citus").
 */
public final class JobQueue {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(JobQueue.class);

    /** The {@code LISTEN}/{@code NOTIFY} channel; the payload is the queue name. */
    public static final String CHANNEL = "locksmith_jobs";

    // Literals, not bind values, so that generic plans can use the partial indexes (JobStatus#literal).
    private static final Field<String> PENDING = JobStatus.PENDING.literal();
    private static final Field<String> RUNNING = JobStatus.RUNNING.literal();
    private static final Field<String> DONE = JobStatus.DONE.literal();
    private static final Field<String> FAILED = JobStatus.FAILED.literal();
    private static final Field<String> CANCELLED = JobStatus.CANCELLED.literal();
    static final List<Field<String>> LIVE = List.of(PENDING, RUNNING);
    private static final List<Field<String>> FINISHED = List.of(DONE, FAILED, CANCELLED);
    private static final int MAX_ERROR_LENGTH = 10_000;
    private static final int RESCUE_BATCH = 1000;
    /**
     * How long the steps of a two-phase job wait for its row: only another claimer, after the
     * claim's hold ran out, holds it longer than a moment.
     */
    private static final dev.locksmith.LockWait TWO_PHASE_LOCK_WAIT =
            dev.locksmith.LockWait.upTo(Duration.ofSeconds(10));

    private final DSLContext dsl;
    private final JobQueueConfig config;
    private final JobStatements statements;
    private final Enqueuer enqueuer;
    private final SchemaMapping schema;
    private final Observing observing;
    private final Distribution distribution;

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
        this.dsl = Objects.requireNonNull(dsl, "dsl");
        this.config = Objects.requireNonNull(config, "config");
        this.statements = new JobStatements(dsl);
        this.enqueuer = new Enqueuer(dsl, config.notifyOnEnqueue());
        this.distribution = new Distribution(dsl, JOBS, JOBS.SHARD.getName());
        this.schema = SchemaMapping.of(dsl);
        this.observing = Observing.of(dsl);
    }

    /** {@return the settings in force, as given at construction} */
    public JobQueueConfig config() {
        return config;
    }

    // ------------------------------------------------------------------ enqueue

    /**
     * Enqueues {@code job} in the caller's transaction (or auto-commits when there is none).
     * With a unique key that a live job of the queue already has, nothing is inserted and the
     * existing job's id is returned; concurrent enqueues of the same key race safely on the
     * partial unique index: the second waits until the first's transaction ends, then inserts or
     * returns the first's job. With {@link JobQueueConfig#notifyOnEnqueue()}, workers listening on
     * {@value #CHANNEL} are woken when the transaction commits.
     *
     * @param tx the caller's transaction (or an auto-commit context); the job becomes visible to
     *     workers when it commits
     * @param job the job to enqueue
     * @return the new job's id, or the existing live job's id
     */
    public long enqueue(DSLContext tx, NewJob job) {
        DSLContext ctx = schema.on(tx);
        return enqueueAll(ctx, List.of(Objects.requireNonNull(job, "job"))).get(0);
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
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(ctx, "ctx");
        Objects.requireNonNull(jobs, "jobs");
        jobs.forEach(j -> Objects.requireNonNull(j, "jobs must not contain null"));
        if (jobs.isEmpty()) {
            return List.of();
        }
        String traceparent = observing.traceparent();
        if (OrderingLocks.needed(jobs)
                && Errors.translating(() -> ctx.connectionResult(java.sql.Connection::getAutoCommit))) {
            // The keys' locks must last until the rows commit: one transaction of our own.
            return Errors.translating(() -> ctx.transactionResult(c -> insert(c.dsl(), jobs, traceparent)));
        }
        return Errors.translating(() -> insert(ctx, jobs, traceparent));
    }

    private List<Long> insert(DSLContext ctx, List<NewJob> jobs, @Nullable String traceparent) {
        boolean[] inserted = new boolean[jobs.size()];
        List<Long> ids = enqueuer.insert(ctx, jobs, traceparent, inserted, distributedShards(ctx));
        if (observing.enabled()) {
            reportEnqueued(jobs, inserted);
        }
        return ids;
    }

    // ------------------------------------------------------------------ transactional claim

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
        DSLContext ctx = schema.on(tx);
        return claimInTransaction(ctx, Claim.of(queue, n));
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
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(claim, "claim");
        TransactionGuard.requireOpen(ctx, "claimInTransaction");
        return claimed(claim, false, () -> onShards(ctx, claim, false, statements::claimInTransaction, b -> b));
    }

    // ------------------------------------------------------------------ leased claim

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
        Objects.requireNonNull(claim, "claim");
        requirePositive("lease", lease);
        NewJob.requireName("workerId", workerId, 128);
        return claimed(
                claim,
                true,
                () -> onShards(
                        dsl,
                        claim,
                        true,
                        statements::claim,
                        b -> b.set(JobStatements.WORKER, workerId).setInterval(JobStatements.LEASE, lease)));
    }

    /**
     * Runs a claim statement. On plain PostgreSQL: once, for the claim's shards (all when it
     * names none). On Citus, where only a claim naming one shard can lock rows: once per shard,
     * each a single-shard (router) statement, starting at a random one of the claim's shards
     * (every shard of the table, {@code 0} to {@code shards - 1}, when it names none) so that no
     * shard starves, until the limit is reached or every shard was tried; with
     * {@code fill = false}, only until a shard had jobs, so that a transaction's jobs come from
     * one shard and it commits on one node.
     */
    private List<Job> onShards(
            DSLContext ctx,
            Claim claim,
            boolean fill,
            java.util.function.BiFunction<Integer, JobStatements.Shards, RenderedQuery> statement,
            java.util.function.UnaryOperator<Binds> binds) {
        int distributed = distributedShards(ctx);
        if (distributed == 0) {
            RenderedQuery query = statement.apply(
                    claim.limit(), claim.shards().isEmpty() ? JobStatements.Shards.ALL : JobStatements.Shards.SOME);
            return sorted(query.fetch(ctx, binds.apply(claimBinds(query, claim)), JobStatements::job));
        }
        List<Integer> shards = claim.shards().isEmpty()
                ? java.util.stream.IntStream.range(0, distributed).boxed().toList()
                : claim.shards().stream().sorted().toList();
        int start = ThreadLocalRandom.current().nextInt(shards.size());
        List<Job> jobs = new ArrayList<>();
        for (int i = 0; i < shards.size() && jobs.size() < claim.limit(); i++) {
            RenderedQuery query = statement.apply(claim.limit() - jobs.size(), JobStatements.Shards.ONE);
            Binds values = binds.apply(query.binds()
                    .set(JobStatements.QUEUE, claim.queue())
                    .set(JobStatements.SHARD, shards.get((start + i) % shards.size())));
            if (query.hasParameter(JobStatements.CLAIM_TOKEN)) {
                values.set(JobStatements.CLAIM_TOKEN, UUID.randomUUID().toString());
            }
            try {
                jobs.addAll(query.fetch(ctx, values, JobStatements::job));
            } catch (RuntimeException e) {
                if (jobs.isEmpty() || !fill) {
                    throw e;
                }
                // The shards claimed before committed their claims: return those jobs rather
                // than leave them leased to no one until their leases expire.
                LOG.warn(
                        "claim on shard {} of queue {} failed; returning the {} jobs claimed before it",
                        shards.get((start + i) % shards.size()),
                        claim.queue(),
                        jobs.size(),
                        e);
                break;
            }
            if (!fill && !jobs.isEmpty()) {
                break;
            }
        }
        return sorted(jobs);
    }

    /** The jobs table's oid as the server resolves its name (null when it does not exist). */
    private Field<Object> jobsRegclass() {
        return distribution.regclass();
    }

    /**
     * How many shards Citus splits the jobs table into, or 0 when it is a plain table (no Citus,
     * or Citus without the distributed layout): one catalog read, once per queue object (two on
     * Citus).
     */
    int distributedShards(DSLContext ctx) {
        return distribution.shards(ctx);
    }

    /** Runs a claim as an observed {@link Operation.ClaimJobs}, and reports each job claimed. */
    private List<Job> claimed(Claim claim, boolean leased, java.util.function.Supplier<List<Job>> statement) {
        if (!observing.enabled()) {
            return statement.get();
        }
        List<Job> jobs = observing.observe(
                () -> new Operation.ClaimJobs(claim.queue(), leased),
                statement,
                j -> j.isEmpty() ? Outcome.EMPTY : Outcome.OK);
        jobs.forEach(job -> observing.jobEvent(JobEvent.CLAIMED, job));
        return jobs;
    }

    private void reportEnqueued(List<NewJob> jobs, boolean[] inserted) {
        Map<List<String>, Integer> counts = new java.util.LinkedHashMap<>();
        for (int i = 0; i < jobs.size(); i++) {
            if (inserted[i]) {
                counts.merge(List.of(jobs.get(i).queue(), jobs.get(i).kind()), 1, Integer::sum);
            }
        }
        counts.forEach((key, count) -> observing.jobsEnqueued(key.get(0), key.get(1), count));
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
        boolean held = extendLease(job, lease);
        if (!held) {
            leaseLost(job);
        }
        return held;
    }

    /**
     * {@link #heartbeat} without reporting a lost lease, for {@link JobWorker}: its heartbeat can
     * find the row gone because the worker's own completion just committed, which is no lost
     * lease; it reports through {@link #leaseLost} when it is one.
     */
    @SuppressWarnings("NullAway") // job.leaseId() is not null: requireLeased checked it
    boolean extendLease(Job job, Duration lease) {
        requirePositive("lease", lease);
        requireLeased(job);
        if (distributedShards(dsl) > 0) {
            return !extendLeases(List.of(job), lease).isEmpty(); // names the job's shard
        }
        return statements.heartbeat.execute(
                        dsl,
                        statements
                                .heartbeat
                                .binds()
                                .set(JobStatements.ID, job.id())
                                .set(JobStatements.LEASE_ID, job.leaseId())
                                .setInterval(JobStatements.LEASE, lease))
                == 1;
    }

    /** Reports {@code job}'s lease lost (once per lease, however many calls find it). */
    void leaseLost(Job job) {
        observing.jobEvent(JobEvent.LEASE_LOST, job);
    }

    /**
     * Completes a leased job in the caller's transaction (so it commits with the caller's
     * writes): deletes it, or keeps it as {@code done} when {@link JobQueueConfig#keepCompleted()}.
     * The row stays locked until the caller's transaction ends, so a concurrent rescue or cancel
     * waits for it.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param job the job as the leased claim returned it
     * @return false when the caller no longer holds the lease; nothing changed then
     * @throws IllegalArgumentException for a job that was not leased (no lease id)
     */
    public boolean complete(DSLContext tx, Job job) {
        DSLContext ctx = schema.on(tx);
        return completeAll(ctx, List.of(Objects.requireNonNull(job, "job"))) == 1;
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
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(ctx, "ctx");
        Objects.requireNonNull(jobs, "jobs");
        if (jobs.isEmpty()) {
            return 0;
        }
        if (!observing.enabled() && distributedShards(ctx) == 0) {
            RenderedQuery statement = completion();
            return statement.execute(ctx, completionBinds(statement, jobs));
        }
        return completed(ctx, jobs).size();
    }

    /**
     * Completes leased jobs whose handlers have ended, in one auto-committed statement: the
     * batched completion of {@link JobWorker}. No two of {@code jobs} may have the same id (a
     * lapsed lease and its successor are settled in different batches).
     *
     * @return the ids of those completed; the others' leases were lost
     */
    Set<Long> completeLeased(Collection<Job> jobs) {
        return jobs.isEmpty() ? Set.of() : completed(dsl, jobs);
    }

    private Set<Long> completed(DSLContext ctx, Collection<Job> jobs) {
        java.util.function.Supplier<Set<Long>> statement = () -> byShard(
                ctx,
                jobs,
                config.keepCompleted() ? statements.completeKeepingDone : statements.completeByDeleting,
                config.keepCompleted() ? statements.completeKeepingDoneInShard : statements.completeByDeletingInShard,
                binds -> binds,
                row -> row.getLong(1));
        if (!observing.enabled()) {
            return statement.get();
        }
        List<Job> all = List.copyOf(jobs);
        Set<Long> completed = observing.observe(
                () -> new Operation.CompleteJobs(all),
                statement,
                done -> done.isEmpty() ? Outcome.LEASE_LOST : Outcome.OK);
        for (Job job : all) {
            observing.jobEvent(completed.contains(job.id()) ? JobEvent.COMPLETED : JobEvent.LEASE_LOST, job);
        }
        return completed;
    }

    private RenderedQuery completion() {
        return config.keepCompleted() ? statements.completeKeepingDone : statements.completeByDeleting;
    }

    private static Binds completionBinds(RenderedQuery statement, Collection<Job> jobs) {
        List<Long> ids = new ArrayList<>(jobs.size());
        List<UUID> leaseIds = new ArrayList<>(jobs.size());
        for (Job job : jobs) {
            requireLeased(job);
            ids.add(job.id());
            leaseIds.add(job.leaseId());
        }
        return statement.binds().setLongs(JobStatements.IDS, ids).setUuids(JobStatements.LEASE_IDS, leaseIds);
    }

    /**
     * Extends the leases of all {@code jobs} to {@code now() + lease} in one auto-committed
     * statement (a {@link JobWorker}'s heartbeat); waits for rows another transaction is changing.
     *
     * @return the lease ids still held; the others are gone (completed, rescued or cancelled)
     */
    Set<UUID> extendLeases(Collection<Job> jobs, Duration lease) {
        requirePositive("lease", lease);
        if (jobs.isEmpty()) {
            return Set.of();
        }
        return byShard(
                dsl,
                jobs,
                statements.heartbeatAll,
                statements.heartbeatInShard,
                binds -> binds.setInterval(JobStatements.LEASE, lease),
                row -> row.getObject(1, UUID.class));
    }

    /**
     * Runs a statement over leased jobs matched by id and lease id: once for all of them on one
     * server; on Citus once per shard, naming it ({@code inShard}), so that each is a router
     * statement rather than one that visits every shard (and, auto-committed across two workers,
     * would need two-phase commit). Returns the union of the rows.
     */
    private <T> Set<T> byShard(
            DSLContext ctx,
            Collection<Job> jobs,
            RenderedQuery all,
            RenderedQuery inShard,
            java.util.function.UnaryOperator<Binds> more,
            RenderedQuery.RowMapper<T> row) {
        if (distributedShards(ctx) == 0) {
            return new java.util.HashSet<>(all.fetch(ctx, more.apply(completionBinds(all, jobs)), row));
        }
        Map<Integer, List<Job>> shards = new java.util.TreeMap<>();
        for (Job job : jobs) {
            shards.computeIfAbsent(job.shard(), s -> new ArrayList<>()).add(job);
        }
        Set<T> rows = new java.util.HashSet<>();
        shards.forEach((shard, ofShard) -> rows.addAll(inShard.fetch(
                ctx, more.apply(completionBinds(inShard, ofShard)).set(JobStatements.SHARD, shard), row)));
        return rows;
    }

    /**
     * Whether the caller's transaction has written anything so far (it has a transaction id).
     *
     * @param tx the caller's transaction
     */
    boolean wroteInTransaction(DSLContext tx) {
        DSLContext ctx = schema.on(tx);
        if (sentNothing(ctx)) {
            return false;
        }
        if (distributedShards(ctx) > 0) {
            // On Citus, writes that went to worker nodes need not assign the coordinator's
            // transaction id: a handler that sent anything is taken to have written.
            return true;
        }
        RenderedQuery statement = statements.wroteInTransaction;
        return statement
                .fetchOptional(ctx, statement.binds(), row -> row.getBoolean(1))
                .orElse(true);
    }

    /**
     * Whether nothing at all was sent in the transaction on {@code tx}'s connection (PgJDBC
     * begins a transaction lazily, with its first statement): a handler that did not use the
     * database then costs no round trip. False when the driver cannot tell.
     */
    private static boolean sentNothing(DSLContext tx) {
        return tx.connectionResult(c -> c.isWrapperFor(org.postgresql.core.BaseConnection.class)
                && c.unwrap(org.postgresql.core.BaseConnection.class).getTransactionState()
                        == org.postgresql.core.TransactionState.IDLE);
    }

    /**
     * Of {@code ids}, those whose job is still there and not {@code done}: after a completion
     * whose outcome is unknown, the others were completed (by it, or by whoever held the job
     * later).
     */
    Set<Long> unfinished(Collection<Long> ids) {
        return Errors.translating(() -> dsl.select(JOBS.ID)
                .from(JOBS)
                .where(JOBS.ID.in(ids))
                .and(JOBS.STATUS.ne(JobStatus.DONE.literal()))
                .fetchSet(JOBS.ID));
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
        Duration delay = config.retryBackoff()
                .delay(Math.max(1, job.attempts()), ThreadLocalRandom.current().nextDouble());
        return settleLeased(tx, job, JobControl.Action.RETRY, delay, truncate(error));
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
        Objects.requireNonNull(control, "control");
        return settleLeased(tx, job, control.action(), control.delay(), truncate(control.reason()));
    }

    private FailResult settleLeased(DSLContext tx, Job job, JobControl.Action action, Duration delay, String message) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(ctx, "ctx");
        Condition owned = owned(job);
        JobControl.Action effective = action == JobControl.Action.RETRY && job.attempts() >= job.maxAttempts()
                ? JobControl.Action.FAIL
                : action;
        return failed(
                job,
                () -> Errors.translating(() -> {
                    var update = ctx.update(JOBS)
                            .set(JOBS.UPDATED_AT, statementTime())
                            .setNull(JOBS.LOCKED_BY)
                            .setNull(JOBS.LOCKED_UNTIL)
                            .setNull(JOBS.LEASE_ID);
                    var set = switch (effective) {
                        case SNOOZE ->
                            update.set(JOBS.STATUS, PENDING)
                                    .set(JOBS.RUN_AT, after(delay))
                                    .set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.minus(1));
                        case RETRY ->
                            update.set(JOBS.STATUS, PENDING)
                                    .set(JOBS.RUN_AT, after(delay))
                                    .set(JOBS.LAST_ERROR, message);
                        case FAIL ->
                            update.set(JOBS.STATUS, FAILED)
                                    .set(JOBS.FINISHED_AT, DSL.currentOffsetDateTime())
                                    .set(JOBS.LAST_ERROR, message);
                        case CANCEL ->
                            update.set(JOBS.STATUS, CANCELLED)
                                    .set(JOBS.FINISHED_AT, DSL.currentOffsetDateTime())
                                    .set(JOBS.LAST_ERROR, message);
                    };
                    Optional<JobsRecord> row =
                            set.where(owned).returning(JOBS.RUN_AT).fetchOptional();
                    return row.isEmpty()
                            ? new FailResult(FailResult.Outcome.LEASE_LOST, Optional.empty())
                            : result(effective, row.get().getRunAt());
                }));
    }

    /** The result of settling a job with {@code action}; {@code runAt} is the row's as written. */
    private static FailResult result(JobControl.Action action, OffsetDateTime runAt) {
        return switch (action) {
            case SNOOZE -> new FailResult(FailResult.Outcome.SNOOZED, Optional.of(runAt));
            case RETRY -> new FailResult(FailResult.Outcome.RETRY_SCHEDULED, Optional.of(runAt));
            case FAIL -> new FailResult(FailResult.Outcome.FAILED, Optional.empty());
            case CANCEL -> new FailResult(FailResult.Outcome.CANCELLED, Optional.empty());
        };
    }

    /** Runs the recording of a failed attempt as an observed {@link Operation.FailJob}. */
    private FailResult failed(Job job, java.util.function.Supplier<FailResult> statement) {
        return failed(job, statement, true);
    }

    /**
     * Runs the recording of a failed attempt as an observed {@link Operation.FailJob}; a
     * {@link FailResult.Outcome#LEASE_LOST} result is reported as a {@link JobEvent} only when
     * {@code reportLost} (a job of {@link TwoPhaseWorker} has no lease to lose).
     */
    private FailResult failed(Job job, java.util.function.Supplier<FailResult> statement, boolean reportLost) {
        if (!observing.enabled()) {
            return statement.get();
        }
        FailResult result = observing.observe(() -> new Operation.FailJob(job), statement, r -> switch (r.outcome()) {
            case RETRY_SCHEDULED -> Outcome.RETRY_SCHEDULED;
            case FAILED -> Outcome.FAILED;
            case LEASE_LOST -> Outcome.LEASE_LOST;
            case SNOOZED -> Outcome.SNOOZED;
            case CANCELLED -> Outcome.CANCELLED;
        });
        if (result.outcome() != FailResult.Outcome.LEASE_LOST || reportLost) {
            observing.jobEvent(
                    switch (result.outcome()) {
                        case RETRY_SCHEDULED -> JobEvent.RETRY_SCHEDULED;
                        case FAILED -> JobEvent.FAILED;
                        case LEASE_LOST -> JobEvent.LEASE_LOST;
                        case SNOOZED -> JobEvent.SNOOZED;
                        case CANCELLED -> JobEvent.CANCELLED;
                    },
                    job);
        }
        return result;
    }

    // ------------------------------------------------------------------ two-phase steps (TwoPhaseWorker)

    /**
     * The first step of a {@link TwoPhaseWorker} claim, one auto-committed statement: up to
     * {@code claim.limit()} due jobs get {@code attempts + 1} and {@code run_at = now + hold},
     * staying {@code pending}. Counting the attempt in a committed statement before the claiming
     * transaction is what makes a rollback of that transaction (the side effect failed, or the
     * resolver rolled it back) restore a job whose attempt is counted and which no claimer takes
     * until the worker has written its backoff: the alternative, counting after the rollback,
     * races with claimers, which won more than half of the time in a loaded test.
     */
    List<Job> claimForTwoPhase(DSLContext autoCommit, Claim claim, Duration hold) {
        DSLContext ctx = schema.on(autoCommit);
        return claimed(
                claim,
                false,
                () -> onShards(
                        ctx, claim, true, statements::claimTwoPhase, b -> b.setInterval(JobStatements.HOLD, hold)));
    }

    /**
     * The second step, in the transaction to be prepared: deletes the job claimed by
     * {@link #claimForTwoPhase}, if it is still as that claim left it (pending, with the
     * attempts it counted), waiting for its row at most {@link #TWO_PHASE_LOCK_WAIT}.
     *
     * @return false when the hold ran out and another claimer has the job; the transaction is
     *     then to be rolled back
     */
    boolean takeTwoPhase(DSLContext tx, Job job) {
        DSLContext ctx = schema.on(tx);
        try {
            return TWO_PHASE_LOCK_WAIT.run(
                            ctx,
                            () -> ctx.deleteFrom(JOBS)
                                    .where(JOBS.ID.in(heldAsClaimed(ctx, job)))
                                    .execute())
                    == 1;
        } catch (dev.locksmith.exception.LockNotAvailableException stillHeld) {
            return false;
        }
    }

    /**
     * Records the failure of a two-phase attempt after its transaction rolled back (the attempt was
     * counted by the claim): {@code last_error}, and {@code run_at} after the retry backoff, or
     * {@code failed} when it was the last attempt. The job is not due meanwhile (the claim's
     * hold), so no claimer competes for it.
     *
     * @return {@link FailResult.Outcome#LEASE_LOST} when the job is no longer as the claim left it
     *     (the hold ran out and another claimer took it); nothing changed then
     */
    FailResult failTwoPhase(DSLContext autoCommit, Job job, @Nullable String error) {
        DSLContext ctx = schema.on(autoCommit);
        boolean lastAttempt = job.attempts() >= job.maxAttempts();
        Duration delay = config.retryBackoff()
                .delay(Math.max(1, job.attempts()), ThreadLocalRandom.current().nextDouble());
        return failed(
                job,
                () -> {
                    Optional<OffsetDateTime> runAt = onHeldJob(
                            ctx,
                            c -> {
                                var update = c.update(JOBS)
                                        .set(JOBS.LAST_ERROR, truncate(error))
                                        .set(JOBS.UPDATED_AT, statementTime());
                                return (lastAttempt
                                                ? update.set(JOBS.STATUS, FAILED)
                                                        .set(JOBS.FINISHED_AT, DSL.currentOffsetDateTime())
                                                : update.set(JOBS.RUN_AT, after(delay)))
                                        .where(JOBS.ID.in(heldAsClaimed(c, job)))
                                        .returning(JOBS.RUN_AT)
                                        .fetchOptional()
                                        .map(JobsRecord::getRunAt);
                            },
                            Optional.empty());
                    if (runAt.isEmpty()) {
                        return new FailResult(FailResult.Outcome.LEASE_LOST, Optional.empty());
                    }
                    return lastAttempt
                            ? new FailResult(FailResult.Outcome.FAILED, Optional.empty())
                            : new FailResult(FailResult.Outcome.RETRY_SCHEDULED, runAt);
                },
                false);
    }

    /**
     * Gives a two-phase job back without counting its attempt (PREPARE found no free slot: the
     * server's capacity, not the job's failure), due after {@code delay}.
     */
    void releaseTwoPhase(DSLContext autoCommit, Job job, Duration delay) {
        DSLContext ctx = schema.on(autoCommit);
        onHeldJob(
                ctx,
                c -> c.update(JOBS)
                        .set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.minus(1))
                        .set(JOBS.RUN_AT, after(delay))
                        .set(JOBS.UPDATED_AT, statementTime())
                        .where(JOBS.ID.in(heldAsClaimed(c, job)))
                        .execute(),
                0);
    }

    /**
     * Fails a job that a two-phase claim found past its last attempt: the worker of that attempt
     * died before it could record the outcome (before PREPARE, or its resolver's record was lost).
     */
    FailResult failExhaustedTwoPhase(DSLContext autoCommit, Job job) {
        DSLContext ctx = schema.on(autoCommit);
        String error = "its last attempt (" + job.maxAttempts() + " of " + job.maxAttempts()
                + ") did not finish: the worker died before recording its outcome"
                + (job.lastError() == null ? "" : "; before: " + job.lastError());
        return failed(
                job,
                () -> onHeldJob(
                                        ctx,
                                        c -> c.update(JOBS)
                                                .set(JOBS.STATUS, FAILED)
                                                .set(JOBS.ATTEMPTS, job.maxAttempts())
                                                .set(JOBS.FINISHED_AT, DSL.currentOffsetDateTime())
                                                .set(JOBS.UPDATED_AT, statementTime())
                                                .set(JOBS.LAST_ERROR, truncate(error))
                                                .where(JOBS.ID.in(heldAsClaimed(c, job)))
                                                .execute(),
                                        0)
                                == 1
                        ? new FailResult(FailResult.Outcome.FAILED, Optional.empty())
                        : new FailResult(FailResult.Outcome.LEASE_LOST, Optional.empty()),
                false);
    }

    /**
     * Runs {@code statement} on a two-phase job in a transaction of its own, under
     * {@link #TWO_PHASE_LOCK_WAIT}; {@code whenHeld} when the job's row stayed locked all along.
     */
    private <T> T onHeldJob(DSLContext autoCommit, java.util.function.Function<DSLContext, T> statement, T whenHeld) {
        try {
            return Errors.translating(() -> autoCommit.transactionResult(
                    c -> TWO_PHASE_LOCK_WAIT.run(c.dsl(), () -> statement.apply(c.dsl()))));
        } catch (dev.locksmith.exception.LockNotAvailableException stillHeld) {
            return whenHeld;
        }
    }

    /**
     * The job's id, locked, while it is pending with the attempts its two-phase claim gave it. It
     * waits for the lock rather than skipping it: a claim whose snapshot still saw the job as due
     * locks it for a moment before it finds it changed (and leaves it), and skipping would take
     * that for another claimer. {@link #TWO_PHASE_LOCK_WAIT} bounds the wait.
     */
    private static org.jooq.Select<org.jooq.Record1<Long>> heldAsClaimed(DSLContext ctx, Job job) {
        return ctx.select(JOBS.ID)
                .from(JOBS)
                .where(JOBS.ID.eq(job.id()))
                .and(JOBS.SHARD.eq(job.shard()))
                .and(JOBS.STATUS.eq(PENDING))
                .and(JOBS.ATTEMPTS.eq(job.attempts()))
                .forUpdate();
    }

    /**
     * Records a failed attempt of a job claimed in transactional mode, in the transaction that
     * claimed (deleted) it: the row is written back with {@code attempts + 1} and
     * {@code last_error}, {@code pending} after the retry backoff, or {@code failed} once
     * {@code max_attempts} is reached. Call it after rolling back to a savepoint taken after the
     * claim, so that the handler's writes are gone but the deletion is not.
     */
    FailResult requeueFailed(DSLContext tx, Job job, @Nullable String error) {
        Duration delay = config.retryBackoff()
                .delay(job.attempts() + 1, ThreadLocalRandom.current().nextDouble());
        return requeue(tx, job, JobControl.Action.RETRY, delay, truncate(error));
    }

    /**
     * Writes back a job claimed in transactional mode as its handler's {@link JobControl} asks,
     * under the same conditions as {@link #requeueFailed}: a snooze keeps {@code attempts} as it
     * was, the other actions count the attempt.
     */
    FailResult requeue(DSLContext tx, Job job, JobControl control) {
        return requeue(tx, job, control.action(), control.delay(), truncate(control.reason()));
    }

    private FailResult requeue(DSLContext tx, Job job, JobControl.Action action, Duration delay, String message) {
        DSLContext ctx = schema.on(tx);
        int attempts = action == JobControl.Action.SNOOZE ? job.attempts() : job.attempts() + 1;
        JobControl.Action effective =
                action == JobControl.Action.RETRY && attempts >= job.maxAttempts() ? JobControl.Action.FAIL : action;
        boolean finished = effective == JobControl.Action.FAIL || effective == JobControl.Action.CANCEL;
        Field<String> status = switch (effective) {
            case SNOOZE, RETRY -> PENDING;
            case FAIL -> FAILED;
            case CANCEL -> CANCELLED;
        };
        Field<OffsetDateTime> runAt = finished ? DSL.val(job.runAt()) : after(delay);
        return failed(
                job,
                () -> Errors.translating(() -> {
                    JobsRecord row = ctx.insertInto(JOBS)
                            .set(JOBS.ID, job.id())
                            .set(JOBS.QUEUE, job.queue())
                            .set(JOBS.SHARD, job.shard())
                            .set(JOBS.KIND, job.kind())
                            .set(JOBS.PAYLOAD, org.jooq.JSONB.valueOf(job.payload()))
                            .set(JOBS.PRIORITY, (short) job.priority())
                            .set(JOBS.RUN_AT, runAt)
                            .set(JOBS.STATUS, status)
                            .set(JOBS.ATTEMPTS, attempts)
                            .set(JOBS.MAX_ATTEMPTS, job.maxAttempts())
                            .set(JOBS.UNIQUE_KEY, job.uniqueKey())
                            .set(JOBS.TRACEPARENT, job.traceparent())
                            .set(JOBS.ORDERING_KEY, job.orderingKey())
                            .set(
                                    JOBS.LAST_ERROR,
                                    effective == JobControl.Action.SNOOZE ? DSL.val(job.lastError()) : DSL.val(message))
                            .set(JOBS.CREATED_AT, job.createdAt())
                            .set(
                                    JOBS.FINISHED_AT,
                                    finished ? DSL.currentOffsetDateTime() : DSL.castNull(JOBS.FINISHED_AT))
                            .returning(JOBS.RUN_AT)
                            .fetchSingle();
                    return result(effective, row.getRunAt());
                }));
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
        Condition owned = owned(job);
        boolean released = Errors.translating(() -> dsl.update(JOBS)
                        .set(JOBS.STATUS, PENDING)
                        .set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.minus(1))
                        .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .setNull(JOBS.LOCKED_BY)
                        .setNull(JOBS.LOCKED_UNTIL)
                        .setNull(JOBS.LEASE_ID)
                        .where(owned)
                        .execute())
                == 1;
        observing.jobEvent(released ? JobEvent.RELEASED : JobEvent.LEASE_LOST, job);
        return released;
    }

    /**
     * Cancels a pending or running job in the caller's transaction. A worker still running it
     * will find its lease gone. The row stays locked until the caller's transaction ends; while
     * a worker's completing transaction holds it, this waits for that one, and then finds the job
     * finished.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param id the job id
     * @return false when the job is already finished or does not exist
     */
    public boolean cancel(DSLContext tx, long id) {
        DSLContext ctx = schema.on(tx);
        return Errors.translating(() -> ctx.update(JOBS)
                        .set(JOBS.STATUS, CANCELLED)
                        .set(JOBS.FINISHED_AT, DSL.currentOffsetDateTime())
                        .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .setNull(JOBS.LOCKED_BY)
                        .setNull(JOBS.LOCKED_UNTIL)
                        .setNull(JOBS.LEASE_ID)
                        .where(JOBS.ID.eq(id).and(JOBS.STATUS.in(LIVE)))
                        .execute())
                == 1;
    }

    /**
     * Puts a {@code failed} or {@code cancelled} job back in its queue, in the caller's
     * transaction: {@code pending}, due at once ({@code run_at} is the statement's time), its
     * {@code finished_at} cleared, and {@code max_attempts} raised to {@code attempts + 1} when it
     * had used them all, so that it gets one more claim; {@code attempts} and {@code last_error}
     * are kept as a record of what happened. Locks the row until the caller's transaction ends;
     * with {@link JobQueueConfig#notifyOnEnqueue()}, workers are woken when it commits. A job of
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
        DSLContext ctx = schema.on(tx);
        Optional<String> queue = Errors.translating(() -> ctx.update(JOBS)
                .set(JOBS.STATUS, PENDING)
                .set(JOBS.RUN_AT, statementTime())
                .set(JOBS.MAX_ATTEMPTS, DSL.greatest(JOBS.MAX_ATTEMPTS, JOBS.ATTEMPTS.plus(1)))
                .setNull(JOBS.FINISHED_AT)
                .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                .where(JOBS.ID.eq(id).and(JOBS.STATUS.in(FAILED, CANCELLED)))
                .returning(JOBS.QUEUE)
                .fetchOptional()
                .map(JobsRecord::getQueue));
        if (queue.isPresent() && config.notifyOnEnqueue()) {
            Errors.translating(
                    () -> ctx.select(DSL.function("pg_notify", Object.class, DSL.val(CHANNEL), DSL.val(queue.get())))
                            .fetch());
        }
        return queue.isPresent();
    }

    /**
     * Deletes one finished ({@code done}, {@code failed} or {@code cancelled}) job in the caller's
     * transaction. A live job is left alone: {@linkplain #cancel cancel} it first. Locks the row
     * until the caller's transaction ends.
     *
     * @param tx the caller's transaction; the deletion commits or rolls back with it
     * @param id the job id
     * @return false when the job does not exist or is still pending or running
     */
    public boolean deleteFinished(DSLContext tx, long id) {
        DSLContext ctx = schema.on(tx);
        return Errors.translating(() -> ctx.deleteFrom(JOBS)
                        .where(JOBS.ID.eq(id).and(JOBS.STATUS.in(FINISHED)))
                        .execute())
                == 1;
    }

    /**
     * Returns running jobs whose lease has expired to {@code pending} (or to {@code failed} when
     * they have used all their attempts), in batches of 1,000 skipping rows being changed right
     * now. Safe to run from every worker at once. Each batch is its own auto-committed statement.
     *
     * @return how many jobs were rescued
     */
    public int rescueExpired() {
        int total = 0;
        int batch;
        Map<String, int[]> byQueue = new java.util.TreeMap<>();
        // On Citus a statement that locks rows must name one shard: one pass per shard, and
        // Citus refuses now() inside CASE, so the exhausted and the other jobs get one
        // statement each there. On one server, one statement with CASE.
        int distributed = distributedShards(dsl);
        List<Condition> scopes = distributed == 0
                ? List.of(DSL.noCondition())
                : java.util.stream.IntStream.range(0, distributed)
                        .mapToObj(JOBS.SHARD::eq)
                        .toList();
        List<@Nullable Boolean> kinds =
                distributed == 0 ? java.util.Collections.singletonList(null) : List.of(true, false);
        for (Condition scope : scopes) {
            for (Boolean exhausted : kinds) {
                do {
                    var rescued = rescueBatch(scope, exhausted);
                    batch = rescued.size();
                    rescued.forEach(r -> byQueue.computeIfAbsent(r.getQueue(), q -> new int[2])[
                            JobStatus.fromDb(r.getStatus()) == JobStatus.FAILED ? 1 : 0]++);
                    total += batch;
                } while (batch == RESCUE_BATCH);
            }
        }
        byQueue.forEach((queue, counts) -> observing.jobsRescued(queue, counts[0], counts[1]));
        return total;
    }

    /**
     * One batch of expired leases in {@code scope} made pending again, or failed when they used
     * their last attempt: all of them when {@code exhausted} is null, else only the exhausted
     * ones (true) or only the others (false).
     */
    private org.jooq.Result<JobsRecord> rescueBatch(Condition scope, @Nullable Boolean exhausted) {
        Condition used = JOBS.ATTEMPTS.ge(JOBS.MAX_ATTEMPTS);
        Field<String> status =
                exhausted == null ? DSL.when(used, FAILED).otherwise(PENDING) : exhausted ? FAILED : PENDING;
        Field<OffsetDateTime> finishedAt = exhausted == null
                ? DSL.when(used, DSL.currentOffsetDateTime()).otherwise(JOBS.FINISHED_AT)
                : exhausted ? DSL.currentOffsetDateTime() : JOBS.FINISHED_AT;
        Condition which = exhausted == null ? DSL.noCondition() : exhausted ? used : used.not();
        return Errors.translating(() -> dsl.update(JOBS)
                .set(JOBS.STATUS, status)
                .set(JOBS.FINISHED_AT, finishedAt)
                .set(JOBS.LAST_ERROR, DSL.concat(DSL.val("lease of "), JOBS.LOCKED_BY, DSL.val(" expired")))
                .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                .setNull(JOBS.LOCKED_BY)
                .setNull(JOBS.LOCKED_UNTIL)
                .setNull(JOBS.LEASE_ID)
                .where(scope)
                .and(JOBS.ID.in(dsl.select(JOBS.ID)
                        .from(JOBS)
                        .where(scope)
                        .and(JOBS.STATUS.eq(RUNNING).and(JOBS.LOCKED_UNTIL.lt(DSL.currentOffsetDateTime())))
                        .and(which)
                        .limit(RESCUE_BATCH)
                        .forUpdate()
                        .skipLocked()))
                .returning(JOBS.QUEUE, JOBS.STATUS)
                .fetch());
    }

    // ------------------------------------------------------------------ reads and maintenance

    /**
     * Reads a job without locking it; never waits.
     *
     * @param tx the transaction (or auto-commit context) to read in
     * @param id the job id
     * @return the job as of {@code tx}'s snapshot; empty when its row is gone (claimed in
     *     transactional mode, completed without {@code keepCompleted}, or deleted by retention)
     */
    public Optional<Job> find(DSLContext tx, long id) {
        DSLContext ctx = schema.on(tx);
        return Errors.translating(
                () -> ctx.selectFrom(JOBS).where(JOBS.ID.eq(id)).fetchOptional().map(Job::from));
    }

    /**
     * Deletes {@code done}, {@code failed} and {@code cancelled} jobs that finished more than
     * {@code age} ago, {@code batchSize} rows per auto-committed statement, so that retention
     * never holds many locks or a long transaction.
     *
     * @param age how long ago a job must have finished (database clock); zero or more
     * @param batchSize rows per statement, 1 to 100,000
     * @return how many rows were deleted
     * @throws IllegalArgumentException when {@code age} is negative or {@code batchSize} out of range
     */
    public int deleteFinishedOlderThan(Duration age, int batchSize) {
        Duration minAge = Durations.nonNegative("age", age);
        if (batchSize < 1 || batchSize > 100_000) {
            throw new IllegalArgumentException("batchSize must be between 1 and 100000, was " + batchSize);
        }
        int total = 0;
        int batch;
        do {
            batch = Errors.translating(() -> dsl.deleteFrom(JOBS)
                    .where(JOBS.ID.in(dsl.select(JOBS.ID)
                            .from(JOBS)
                            .where(JOBS.STATUS.in(FINISHED))
                            .and(JOBS.FINISHED_AT.lt(
                                    DSL.currentOffsetDateTime().minus(DSL.val(DayToSecond.valueOf(minAge)))))
                            .limit(batchSize)))
                    .execute());
            total += batch;
        } while (batch == batchSize);
        return total;
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
        String table = dsl.render(JOBS);
        return Errors.translating(() -> {
            org.jooq.Record2<String, String> row = dsl.select(
                            DSL.field("current_setting('autovacuum')", String.class),
                            DSL.field(
                                    "(SELECT option_value FROM pg_options_to_table("
                                            + "(SELECT reloptions FROM pg_class WHERE oid = {0})) "
                                            + "WHERE option_name = 'autovacuum_enabled')",
                                    String.class, jobsRegclass()))
                    .fetchSingle();
            if (!"on".equals(row.value1())) {
                return Optional.of("autovacuum is off on the server (autovacuum = " + row.value1() + "): the dead rows "
                        + "of " + table
                        + " are removed only by the workers' own VACUUM (vacuumInterval, on by default) and "
                        + "nothing analyzes or freezes it; turn autovacuum on");
            }
            if (row.value2() != null && !Boolean.parseBoolean(row.value2()) && !"on".equals(row.value2())) {
                return Optional.of("autovacuum is off for " + table + " (autovacuum_enabled = " + row.value2()
                        + "): its dead rows are removed only by the workers' own VACUUM (vacuumInterval, on by default) and "
                        + "nothing analyzes or freezes it; turn autovacuum on for it");
            }
            return Optional.empty();
        });
    }

    /**
     * What {@link #vacuumIfDead} found: the table's dead rows (from the statistics), and whether
     * it was vacuumed, or could not be because the connection's role does not own it.
     */
    record VacuumCheck(long deadRows, boolean vacuumed, boolean notOwner) {}

    /**
     * Runs {@code VACUUM (SKIP_LOCKED, TRUNCATE false)} on the jobs table when the statistics
     * count at least {@code minDeadRows} dead rows in it and the connection's role owns it (or is
     * a superuser). {@code SKIP_LOCKED} skips the table while another VACUUM (autovacuum, another
     * worker's) holds it; no truncation, because truncating takes an ACCESS EXCLUSIVE lock that
     * claims wait for, and on a busy queue VACUUM spends five more seconds trying to get it.
     * Must run outside a transaction; a connection that does not auto-commit is switched to
     * auto-commit for the statement and back.
     */
    VacuumCheck vacuumIfDead(long minDeadRows) {
        return Errors.translating(() -> {
            // Who may VACUUM a table: its owner, the database's owner, a superuser (all three
            // through pg_has_role), and from PostgreSQL 17 whoever has MAINTAIN on it.
            org.jooq.Record2<Long, Boolean> row = dsl.select(
                            DSL.field("pg_stat_get_dead_tuples(c.oid)", Long.class),
                            DSL.field(
                                    "pg_has_role(c.relowner, 'USAGE') OR pg_has_role((SELECT datdba FROM "
                                            + "pg_database WHERE datname = current_database()), 'USAGE') OR CASE "
                                            + "WHEN current_setting('server_version_num')::int >= 170000 "
                                            + "THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END",
                                    Boolean.class))
                    .from(DSL.table("pg_class").as("c"))
                    .where(DSL.field("c.oid").eq(jobsRegclass()))
                    .fetchOne();
            if (row == null) {
                return new VacuumCheck(0, false, false);
            }
            long dead = row.value1() == null ? 0 : row.value1();
            if (dead < minDeadRows) {
                return new VacuumCheck(dead, false, false);
            }
            if (!Boolean.TRUE.equals(row.value2())) {
                return new VacuumCheck(dead, false, true);
            }
            String vacuum = dsl.render(DSL.query("VACUUM (SKIP_LOCKED, TRUNCATE false) {0}", JOBS));
            // VACUUM cannot run in a transaction block: on a connection that does not
            // auto-commit (a pool configured so), auto-commit it for this one statement.
            dsl.connection(c -> {
                boolean autoCommit = c.getAutoCommit();
                if (!autoCommit) {
                    c.setAutoCommit(true);
                }
                try (java.sql.Statement statement = c.createStatement()) {
                    statement.execute(vacuum);
                } finally {
                    if (!autoCommit) {
                        c.setAutoCommit(false);
                    }
                }
            });
            return new VacuumCheck(dead, true, false);
        });
    }

    /** Autovacuum problems already logged by a worker of this class loader: each once. */
    private static final Set<String> AUTOVACUUM_WARNED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Logs {@link #autovacuumProblem()} at WARN, if any, once per reason (several workers start
     * at once); a failure to find out at DEBUG.
     */
    static void warnIfNotVacuumed(JobQueue queue, org.slf4j.Logger log) {
        try {
            queue.autovacuumProblem().filter(AUTOVACUUM_WARNED::add).ifPresent(log::warn);
        } catch (RuntimeException e) {
            log.debug("could not read the autovacuum settings", e);
        }
    }

    /**
     * Row counts per queue and status, and the age of each queue's oldest due pending job. Two
     * read-only statements on the queue's own {@code DSLContext} (a scan of the table); meant
     * for metrics, not for every request.
     *
     * @return one entry per queue that has rows, ordered by queue name
     */
    public List<QueueStats> stats() {
        return Errors.translating(() -> {
            Map<String, Map<JobStatus, Long>> counts = new java.util.TreeMap<>();
            dsl.select(JOBS.QUEUE, JOBS.STATUS, DSL.count())
                    .from(JOBS)
                    .groupBy(JOBS.QUEUE, JOBS.STATUS)
                    .fetch()
                    .forEach(r -> counts.computeIfAbsent(r.value1(), q -> new EnumMap<>(JobStatus.class))
                            .put(JobStatus.fromDb(r.value2()), r.value3().longValue()));
            Map<String, Duration> oldest = new HashMap<>();
            dsl.select(JOBS.QUEUE, DSL.min(JOBS.RUN_AT), DSL.currentOffsetDateTime())
                    .from(JOBS)
                    .where(JOBS.STATUS.eq(PENDING).and(JOBS.RUN_AT.le(DSL.currentOffsetDateTime())))
                    .groupBy(JOBS.QUEUE)
                    .fetch()
                    .forEach(r -> oldest.put(r.value1(), Duration.between(r.value2(), r.value3())));
            List<QueueStats> result = new ArrayList<>();
            counts.forEach((queue, byStatus) ->
                    result.add(new QueueStats(queue, Map.copyOf(byStatus), Optional.ofNullable(oldest.get(queue)))));
            return result;
        });
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
        NewJob.requireName("queue", queue, 128);
        if (cap < 1 || cap > 1_000_000) {
            throw new IllegalArgumentException("cap must be between 1 and 1000000, was " + cap);
        }
        Field<String> q = DSL.val(queue);
        Field<Integer> limit = DSL.val(cap);
        // Loose index scan over the priorities of the queue's pending jobs: for each, the oldest
        // due run_at is the first entry of (queue, priority, run_at) with run_at <= now().
        var priorities = DSL.name("priorities");
        var priority = DSL.field(DSL.name("priorities", "priority"), SQLDataType.SMALLINT);
        var cte = priorities
                .fields("priority")
                .as(DSL.select(DSL.field(DSL.select(JOBS.PRIORITY)
                                .from(JOBS)
                                .where(JOBS.QUEUE.eq(q).and(JOBS.STATUS.eq(PENDING)))
                                .orderBy(JOBS.PRIORITY)
                                .limit(1)))
                        .unionAll(DSL.select(DSL.field(DSL.select(JOBS.PRIORITY)
                                        .from(JOBS)
                                        .where(JOBS.QUEUE.eq(q).and(JOBS.STATUS.eq(PENDING)))
                                        .and(JOBS.PRIORITY.gt(priority))
                                        .orderBy(JOBS.PRIORITY)
                                        .limit(1)))
                                .from(DSL.table(priorities))
                                .where(priority.isNotNull())));
        Field<OffsetDateTime> oldestPerPriority = DSL.field(DSL.select(JOBS.RUN_AT)
                .from(JOBS)
                .where(JOBS.QUEUE.eq(q).and(JOBS.STATUS.eq(PENDING)))
                .and(JOBS.PRIORITY.eq(priority))
                .and(JOBS.RUN_AT.le(DSL.currentOffsetDateTime()))
                .orderBy(JOBS.RUN_AT)
                .limit(1));
        Field<Integer> pending = DSL.field(DSL.selectCount()
                .from(DSL.select(DSL.inline(1))
                        .from(JOBS)
                        .where(JOBS.QUEUE.eq(q).and(JOBS.STATUS.eq(PENDING)))
                        .limit(limit)));
        Field<Integer> running = DSL.field(DSL.selectCount()
                .from(DSL.select(DSL.inline(1))
                        .from(JOBS)
                        .where(JOBS.STATUS.eq(RUNNING).and(JOBS.QUEUE.eq(q)))
                        .limit(limit)));
        Field<OffsetDateTime> oldest = DSL.field(
                DSL.withRecursive(cte).select(DSL.min(oldestPerPriority)).from(DSL.table(priorities)));
        return Errors.translating(() -> {
            var row = dsl.select(pending, running, oldest, DSL.currentOffsetDateTime())
                    .fetchSingle();
            OffsetDateTime oldestRunAt = row.value3();
            return new QueueDepth(
                    queue,
                    row.value1(),
                    row.value2(),
                    cap,
                    oldestRunAt == null ? Optional.empty() : Optional.of(Duration.between(oldestRunAt, row.value4())));
        });
    }

    // ------------------------------------------------------------------ SQL pieces

    private static Binds claimBinds(RenderedQuery statement, Claim claim) {
        Binds binds = statement.binds().set(JobStatements.QUEUE, claim.queue());
        return claim.shards().isEmpty() ? binds : binds.setInts(JobStatements.SHARDS, claim.shards());
    }

    private static String truncate(@Nullable String error) {
        return Texts.storable(error, MAX_ERROR_LENGTH);
    }

    private static Condition owned(Job job) {
        requireLeased(job);
        // the shard makes the statement a single-shard one on Citus; elsewhere the key finds the row
        return JOBS.ID
                .eq(job.id())
                .and(JOBS.SHARD.eq(job.shard()))
                .and(JOBS.STATUS.eq(RUNNING))
                .and(JOBS.LEASE_ID.eq(job.leaseId()));
    }

    private static void requireLeased(Job job) {
        Objects.requireNonNull(job, "job");
        if (job.leaseId() == null) {
            throw new IllegalArgumentException("job " + job.id() + " has no lease id: it was not claimed with a lease "
                    + "(use the Job a leased claim returned)");
        }
    }

    /**
     * {@code statement_timestamp() + delay} on the database clock: counted from the statement
     * that writes it, not from the start of the caller's transaction ({@code now()}), so a job
     * enqueued late in a long transaction still waits its whole delay.
     */
    static Field<OffsetDateTime> after(Duration delay) {
        return delay.isZero() ? statementTime() : statementTime().plus(DSL.val(DayToSecond.valueOf(delay)));
    }

    /** {@code statement_timestamp()}: the start of the current statement on the database clock. */
    static Field<OffsetDateTime> statementTime() {
        return DSL.function("statement_timestamp", SQLDataType.TIMESTAMPWITHTIMEZONE);
    }

    static Duration requirePositive(String what, Duration value) {
        return Durations.positive(what, value);
    }

    /** Refuses LISTEN wake-ups behind a transaction pooler, where LISTEN cannot work. */
    static void requireListenAllowed(boolean listen, dev.locksmith.PoolingMode poolingMode) {
        if (listen) {
            poolingMode.requireSessionState(
                    "LISTEN wake-up",
                    "set listen(false) and rely on polling, "
                            + "or give the worker a data source that connects to the server directly");
        }
    }

    /** A worker's thread count: 1 to 1,000. */
    static int requireThreads(int threads) {
        if (threads < 1 || threads > 1000) {
            throw new IllegalArgumentException("threads must be between 1 and 1000, was " + threads);
        }
        return threads;
    }

    private static List<Job> sorted(List<Job> jobs) {
        return jobs.stream()
                .sorted(Comparator.comparingInt(Job::priority)
                        .thenComparing(Job::runAt)
                        .thenComparingLong(Job::id))
                .toList();
    }
}

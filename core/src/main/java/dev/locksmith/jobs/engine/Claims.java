package dev.locksmith.jobs.engine;

import dev.locksmith.internal.Binds;
import dev.locksmith.internal.Durations;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.internal.Texts;
import dev.locksmith.internal.TransactionGuard;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.Job;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiFunction;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The three claims, each one {@code FOR UPDATE SKIP LOCKED} statement ({@link JobStatements}):
 * the transactional claim deletes jobs in the caller's transaction, the leased claim moves them to
 * {@code running} under a lease in one auto-committed statement, and the first step of a two-phase
 * claim counts the attempt and holds the job. On Citus each runs shard by shard, each a
 * single-shard statement. <b>Internal: not API.</b>
 */
public final class Claims {

    private static final Logger LOG = LoggerFactory.getLogger("dev.locksmith.jobs.JobQueue");

    /** The most jobs one keyed statement claims (see {@link #withKeyed}). */
    static final int KEYED_PER_STATEMENT = 256;

    private final QueueContext context;

    Claims(QueueContext context) {
        this.context = context;
    }

    /**
     * Deletes and returns up to {@code claim.limit()} due jobs in the caller's open transaction,
     * from one shard on Citus (so that the transaction commits on one node).
     *
     * @param tx the caller's open transaction
     * @param claim which queue, how many, which shards
     * @return the claimed jobs in claim order, each with its attempt counted
     * @throws IllegalStateException when {@code tx} is in auto-commit mode
     */
    public List<Job> inTransaction(DSLContext tx, Claim claim) {
        return inTransaction(tx, claim, true);
    }

    /**
     * {@link #inTransaction(DSLContext, Claim)} observed as an operation but reporting no
     * {@link JobEvent#CLAIMED}: a worker that owns the transaction reports the jobs once it
     * committed, so that a batch that rolls back and is claimed again is not counted twice.
     *
     * @param tx the worker's open transaction
     * @param claim which queue, how many, which shards
     * @return the claimed jobs in claim order, each with its attempt counted
     */
    public List<Job> inTransactionUnreported(DSLContext tx, Claim claim) {
        return inTransaction(tx, claim, false);
    }

    /**
     * Records jobs of a transactional claim whose handlers succeeded as {@code done} in
     * {@code job_history}, in the claiming transaction, when the queue keeps completed jobs
     * ({@code keepCompleted}); does nothing otherwise. One insert for all of them.
     *
     * @param tx the claiming transaction, before it commits
     * @param jobs the completed jobs, as the claim returned them
     */
    public void keepDone(DSLContext tx, Collection<Job> jobs) {
        if (context.config.keepCompleted() && !jobs.isEmpty()) {
            Errors.translating(() -> History.insert(context.on(tx), jobs, Sql.DONE, null));
        }
    }

    private List<Job> inTransaction(DSLContext tx, Claim claim, boolean events) {
        DSLContext ctx = context.on(tx);
        java.util.Objects.requireNonNull(claim, "claim");
        TransactionGuard.requireOpen(ctx, "claimInTransaction");
        return claimed(
                claim,
                false,
                events,
                () -> onShards(
                        ctx,
                        claim,
                        false,
                        context.statements::claimInTransaction,
                        KeyedClaims.Mode.IN_TRANSACTION,
                        b -> b,
                        context.claimedInTransaction()));
    }

    /**
     * Leases up to {@code claim.limit()} due jobs to {@code workerId} in one auto-committed
     * statement.
     *
     * @param claim which queue, how many, which shards
     * @param lease how long until the lease expires; positive
     * @param workerId recorded as {@code locked_by}, 1 to 128 characters
     * @return the leased jobs in claim order
     */
    public List<Job> leased(Claim claim, Duration lease, String workerId) {
        java.util.Objects.requireNonNull(claim, "claim");
        Durations.positive("lease", lease);
        Texts.requireName("workerId", workerId, 128);
        return claimed(
                claim,
                true,
                true,
                () -> onShards(
                        context.dsl,
                        claim,
                        true,
                        context.statements::claim,
                        KeyedClaims.Mode.LEASED,
                        b -> b.set(JobStatements.WORKER, workerId).setInterval(JobStatements.LEASE, lease),
                        context.claimed()));
    }

    /**
     * The first step of a two-phase claim, one auto-committed statement: up to
     * {@code claim.limit()} due jobs get {@code attempts + 1} and {@code run_at = now + hold},
     * staying {@code pending}. Counting the attempt in a committed statement before the claiming
     * transaction is what makes a rollback of that transaction (the side effect failed, or the
     * resolver rolled it back) restore a job whose attempt is counted and which no claimer takes
     * until the worker has written its backoff: the alternative, counting after the rollback,
     * races with claimers, which won more than half of the time in a loaded test.
     *
     * @param autoCommit a context in auto-commit mode
     * @param claim which queue, how many, which shards
     * @param hold how long the jobs stay held (not due)
     * @return the held jobs
     */
    public List<Job> twoPhase(DSLContext autoCommit, Claim claim, Duration hold) {
        DSLContext ctx = context.on(autoCommit);
        return claimed(
                claim,
                false,
                true,
                () -> onShards(
                        ctx,
                        claim,
                        true,
                        context.statements::claimTwoPhase,
                        KeyedClaims.Mode.HELD,
                        b -> b.setInterval(JobStatements.HOLD, hold),
                        context.claimed()));
    }

    /**
     * Runs a claim statement. On plain PostgreSQL: once, for the claim's shards (all when it
     * names none). On Citus, where only a claim naming one shard can lock rows: once per shard,
     * each a single-shard (router) statement, starting at a random one of the claim's shards
     * (every shard of the table, {@code 0} to {@code shards - 1}, when it names none) so that no
     * shard starves, until the limit is reached or every shard was tried; with
     * {@code fill = false}, only until a shard had jobs, so that a transaction's jobs come from
     * one shard and it commits on one node. A queue with concurrency limits is claimed with its
     * keyed claim ({@code keyed}) beside the plain one ({@link #withKeyed}), on Citus per shard.
     */
    private List<Job> onShards(
            DSLContext ctx,
            Claim claim,
            boolean fill,
            BiFunction<Integer, JobStatements.Shards, RenderedQuery> statement,
            KeyedClaims.Mode keyed,
            UnaryOperator<Binds> binds,
            RenderedQuery.RowMapper<Job> mapper) {
        int distributed = context.shards(ctx);
        if (distributed == 0) {
            JobStatements.Shards which =
                    claim.shards().isEmpty() ? JobStatements.Shards.ALL : JobStatements.Shards.SOME;
            IntFunction<List<Job>> plain = left -> {
                RenderedQuery query = statement.apply(left, which);
                return query.fetch(ctx, binds.apply(claimBinds(query, claim)), mapper);
            };
            if (!context.keyed.limited(ctx, claim.queue())) {
                return sorted(plain.apply(claim.limit()));
            }
            return sorted(withKeyed(
                    ctx,
                    claim.queue(),
                    claim.limit(),
                    fill,
                    left -> {
                        RenderedQuery keyedClaim =
                                context.keyed.statement(keyed, left, context.keyed.rated(ctx, claim.queue()));
                        return context.keyed.claim(ctx, claim, left, keyedClaim, fill, binds, mapper);
                    },
                    plain));
        }
        List<Integer> shards = claim.shards().isEmpty()
                ? IntStream.range(0, distributed).boxed().toList()
                : claim.shards().stream().sorted().toList();
        int start = ThreadLocalRandom.current().nextInt(shards.size());
        // two-phase claims leave keyed jobs alone on Citus, where TwoPhaseWorker refuses to start
        boolean limited = keyed != KeyedClaims.Mode.HELD && context.keyed.limited(ctx, claim.queue());
        List<Job> jobs = new ArrayList<>();
        for (int i = 0; i < shards.size() && jobs.size() < claim.limit(); i++) {
            int shard = shards.get((start + i) % shards.size());
            IntFunction<List<Job>> plain = left -> {
                RenderedQuery query = statement.apply(left, JobStatements.Shards.ONE);
                Binds values = binds.apply(
                        query.binds().set(JobStatements.QUEUE, claim.queue()).set(JobStatements.SHARD, shard));
                if (query.hasParameter(JobStatements.CLAIM_TOKEN)) {
                    values.set(JobStatements.CLAIM_TOKEN, UUID.randomUUID().toString());
                }
                return query.fetch(ctx, values, mapper);
            };
            int left = claim.limit() - jobs.size();
            try {
                jobs.addAll(
                        limited
                                ? withKeyed(
                                        ctx,
                                        claim.queue(),
                                        left,
                                        fill,
                                        n -> context.keyed.claimOnShard(
                                                ctx, keyed, claim.queue(), shard, n, fill, binds, mapper),
                                        plain)
                                : plain.apply(left));
            } catch (RuntimeException e) {
                if (jobs.isEmpty() || !fill) {
                    throw e;
                }
                // The shards claimed before committed their claims: return those jobs rather
                // than leave them leased to no one until their leases expire.
                LOG.warn(
                        "claim on shard {} of queue {} failed; returning the {} jobs claimed before it",
                        shard,
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

    /**
     * A claim of up to {@code limit} jobs of a queue with concurrency limits: keyed jobs through
     * {@code keyed} ({@link KeyedClaims}), the others through {@code plain}, the plain claim,
     * which leaves keyed jobs alone; each takes what the other left of the limit. Which goes first
     * is a coin toss per claim, so that neither kind of job can keep the other out of full
     * batches. The plain claim is left out while the queue had no pending job without a key at
     * its last look ({@link KeyedClaims#unkeyed}). A transactional claim ({@code fill} false)
     * stops after the first statement that claimed jobs: the second would not see the rows the
     * first deleted, and could take the next job of an ordering key whose head the first took.
     * The keyed statement claims at most {@value #KEYED_PER_STATEMENT} jobs: each holds an
     * advisory lock until the claim's transaction ends, and PostgreSQL's lock table is shared by
     * every session.
     */
    private List<Job> withKeyed(
            DSLContext ctx,
            String queue,
            int limit,
            boolean fill,
            IntFunction<List<Job>> keyed,
            IntFunction<List<Job>> plain) {
        boolean keyedFirst = ThreadLocalRandom.current().nextBoolean();
        List<Job> jobs = new ArrayList<>();
        for (int turn = 0; turn < 2 && jobs.size() < limit && (fill || jobs.isEmpty()); turn++) {
            int left = limit - jobs.size();
            if ((turn == 0) == keyedFirst) {
                jobs.addAll(keyed.apply(Math.min(left, KEYED_PER_STATEMENT)));
            } else if (context.keyed.unkeyed(ctx, queue)) {
                jobs.addAll(plain.apply(left));
            }
        }
        return jobs;
    }

    /** Runs a claim as an observed {@link Operation.ClaimJobs}, and reports each job claimed. */
    private List<Job> claimed(Claim claim, boolean leased, boolean events, Supplier<List<Job>> statement) {
        if (!context.observing.enabled()) {
            return statement.get();
        }
        List<Job> jobs = context.observing.observe(
                () -> new Operation.ClaimJobs(claim.queue(), leased),
                statement,
                j -> j.isEmpty() ? Outcome.EMPTY : Outcome.OK);
        if (events) {
            jobs.forEach(job -> context.observing.jobEvent(JobEvent.CLAIMED, job));
        }
        return jobs;
    }

    private static Binds claimBinds(RenderedQuery statement, Claim claim) {
        Binds binds = statement.binds().set(JobStatements.QUEUE, claim.queue());
        return claim.shards().isEmpty() ? binds : binds.setInts(JobStatements.SHARDS, claim.shards());
    }

    private static List<Job> sorted(List<Job> jobs) {
        return jobs.stream()
                .sorted(Comparator.comparingInt(Job::priority)
                        .thenComparing(Job::runAt)
                        .thenComparingLong(Job::id))
                .toList();
    }
}

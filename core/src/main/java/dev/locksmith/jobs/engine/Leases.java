package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;

import dev.locksmith.internal.Binds;
import dev.locksmith.internal.Durations;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.jobs.Job;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * What happens to a leased job while its lease lasts: heartbeats that extend it, completion,
 * and giving it back. Every transition matches the row by id and lease id, and applies only while
 * the row is running under that lease: a worker whose lease expired and was rescued gets
 * {@code false}, never a silent success. On Citus each statement names the job's shard.
 * <b>Internal: not API.</b>
 */
public final class Leases {

    private final QueueContext context;

    Leases(QueueContext context) {
        this.context = context;
    }

    /**
     * Extends the lease of one job to {@code now() + lease} in one auto-committed statement,
     * without reporting a lost lease (a worker's heartbeat can find the row gone because its own
     * completion just committed, which is no lost lease).
     *
     * @return false when the lease is gone
     */
    @SuppressWarnings("NullAway") // job.leaseId() is not null: requireLeased checked it
    public boolean extend(Job job, Duration lease) {
        Durations.positive("lease", lease);
        requireLeased(job);
        if (context.shards(context.dsl) > 0) {
            return !extendAll(List.of(job), lease).isEmpty(); // names the job's shard
        }
        RenderedQuery heartbeat = context.statements.heartbeat;
        return heartbeat.execute(
                        context.dsl,
                        heartbeat
                                .binds()
                                .set(JobStatements.ID, job.id())
                                .set(JobStatements.SLOT, context.slot(job))
                                .set(JobStatements.LEASE_ID, job.leaseId())
                                .setInterval(JobStatements.LEASE, lease))
                == 1;
    }

    /**
     * Extends the leases of all {@code jobs} to {@code now() + lease} in one auto-committed
     * statement (a worker's heartbeat); waits for rows another transaction is changing.
     *
     * @return the lease ids still held; the others are gone (completed, rescued or cancelled)
     */
    public Set<UUID> extendAll(Collection<Job> jobs, Duration lease) {
        Durations.positive("lease", lease);
        if (jobs.isEmpty()) {
            return Set.of();
        }
        return byPartition(
                context.dsl,
                jobs,
                context.statements.heartbeatAll,
                context.statements.heartbeatInShard,
                binds -> binds.setInterval(JobStatements.LEASE, lease),
                row -> row.getObject(1, UUID.class));
    }

    /** Reports {@code job}'s lease lost (once per lease, however many calls find it). */
    public void lost(Job job) {
        context.observing.jobEvent(JobEvent.LEASE_LOST, job);
    }

    /**
     * Completes leased jobs in the caller's transaction with one statement: deletes them, or keeps
     * them as {@code done} with {@code keepCompleted}. The rows stay locked until it ends.
     *
     * @return how many were completed; jobs whose lease the caller lost are left alone
     */
    public int complete(DSLContext tx, Collection<Job> jobs) {
        DSLContext ctx = context.on(tx);
        Objects.requireNonNull(jobs, "jobs");
        if (jobs.isEmpty()) {
            return 0;
        }
        if (!context.observing.enabled() && context.shards(ctx) == 0 && oneSlot(jobs)) {
            RenderedQuery statement = completion();
            return statement.execute(ctx, completionBinds(statement, jobs));
        }
        return completed(ctx, jobs).size();
    }

    /**
     * Completes one leased job in its handler's transaction, reporting no job event (the worker
     * reports it once the transaction committed); the span of the completion is a child of the
     * handler's.
     *
     * @return false when the lease is gone; nothing changed then
     */
    public boolean completeOne(DSLContext tx, Job job) {
        DSLContext ctx = context.on(tx);
        if (!context.observing.enabled() && context.shards(ctx) == 0) {
            RenderedQuery statement = completion();
            return statement.execute(ctx, completionBinds(statement, List.of(job))) == 1;
        }
        return !completed(ctx, List.of(job), List.of(), false).isEmpty();
    }

    /**
     * Completes leased jobs in one statement on {@code ctx} (the worker's: a batch of jobs whose
     * handlers ended, auto-committed, or one job in its handler's transaction), observed as an
     * operation whose span links to {@code links} (the handler runs' trace contexts) but reporting
     * no job events: the worker reports them once it knows the outcome committed. No two of
     * {@code jobs} may have the same id.
     *
     * @return the ids of those completed; the others' leases were lost
     */
    public Set<Long> completeUnreported(DSLContext ctx, Collection<Job> jobs, List<String> links) {
        return jobs.isEmpty() ? Set.of() : completed(context.on(ctx), jobs, links, false);
    }

    private Set<Long> completed(DSLContext ctx, Collection<Job> jobs) {
        return completed(ctx, jobs, List.of(), true);
    }

    private Set<Long> completed(DSLContext ctx, Collection<Job> jobs, List<String> links, boolean events) {
        boolean keep = context.config.keepCompleted();
        Supplier<Set<Long>> statement = () -> byPartition(
                ctx,
                jobs,
                keep ? context.statements.completeKeepingDone : context.statements.completeByDeleting,
                keep ? context.statements.completeKeepingDoneInShard : context.statements.completeByDeletingInShard,
                binds -> binds,
                row -> row.getLong(1));
        if (!context.observing.enabled()) {
            return statement.get();
        }
        List<Job> all = List.copyOf(jobs);
        Set<Long> completed = context.observing.observe(
                () -> new Operation.CompleteJobs(all, links),
                statement,
                done -> done.isEmpty() ? Outcome.LEASE_LOST : Outcome.OK);
        if (events) {
            for (Job job : all) {
                context.observing.jobEvent(
                        completed.contains(job.id()) ? JobEvent.COMPLETED : JobEvent.LEASE_LOST, job);
            }
        }
        return completed;
    }

    /**
     * Gives a leased job back without counting the attempt: {@code pending} again at once. One
     * auto-committed statement.
     *
     * @return false when the caller no longer held the lease
     */
    public boolean release(Job job) {
        Condition owned = owned(job, context.slot(job));
        boolean released = Errors.translating(() -> context.dsl
                        .update(JOBS)
                        .set(JOBS.STATUS, Sql.PENDING)
                        .set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.minus(1))
                        .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                        .setNull(JOBS.LOCKED_BY)
                        .setNull(JOBS.LOCKED_UNTIL)
                        .setNull(JOBS.LEASE_ID)
                        .where(owned)
                        .execute())
                == 1;
        context.observing.jobEvent(released ? JobEvent.RELEASED : JobEvent.LEASE_LOST, job);
        return released;
    }

    private RenderedQuery completion() {
        return context.config.keepCompleted()
                ? context.statements.completeKeepingDone
                : context.statements.completeByDeleting;
    }

    /**
     * Runs a statement over leased jobs matched by id and lease id, once per partition of
     * {@code jobs} they are in (nearly always one: see {@link JobStatements#SLOT}), naming it; on
     * Citus once per shard too ({@code inShard}), so that each is a router statement rather than
     * one that visits every shard (and, auto-committed across two workers, would need two-phase
     * commit). The statements run in ascending (shard, slot) order, so two callers' batches lock
     * their rows in the same order. Returns the union of the rows.
     */
    private <T> Set<T> byPartition(
            DSLContext ctx,
            Collection<Job> jobs,
            RenderedQuery all,
            RenderedQuery inShard,
            UnaryOperator<Binds> more,
            RenderedQuery.RowMapper<T> row) {
        boolean distributed = context.shards(ctx) > 0;
        RenderedQuery statement = distributed ? inShard : all;
        Map<Long, List<Job>> partitions = new TreeMap<>();
        for (Job job : jobs) {
            requireLeased(job);
            long key = ((long) (distributed ? job.shard() : 0) << 16) | context.slot(job);
            partitions.computeIfAbsent(key, k -> new ArrayList<>()).add(job);
        }
        Set<T> rows = new HashSet<>();
        partitions.forEach((key, ofPartition) -> {
            Binds binds = more.apply(completionBinds(statement, ofPartition));
            if (distributed) {
                binds.set(JobStatements.SHARD, (int) (key >>> 16));
            }
            rows.addAll(statement.fetch(ctx, binds, row));
        });
        return rows;
    }

    /** Whether every one of {@code jobs} is in one partition: one statement completes them all. */
    private boolean oneSlot(Collection<Job> jobs) {
        Set<Short> slots = new HashSet<>();
        for (Job job : jobs) {
            requireLeased(job);
            slots.add(context.slot(job));
        }
        return slots.size() == 1;
    }

    private Binds completionBinds(RenderedQuery statement, Collection<Job> jobs) {
        List<Long> ids = new ArrayList<>(jobs.size());
        List<UUID> leaseIds = new ArrayList<>(jobs.size());
        for (Job job : jobs) {
            requireLeased(job);
            ids.add(job.id());
            leaseIds.add(job.leaseId());
        }
        return statement
                .binds()
                .setLongs(JobStatements.IDS, ids)
                .setUuids(JobStatements.LEASE_IDS, leaseIds)
                .set(JobStatements.SLOT, context.slot(jobs.iterator().next()));
    }

    /**
     * The row of a leased job while the caller still holds its lease.
     *
     * @param slot the job's partition of {@code jobs}, {@link QueueContext#slot}: with the id, the
     *     whole primary key
     */
    static Condition owned(Job job, short slot) {
        requireLeased(job);
        // the shard makes the statement a single-shard one on Citus; elsewhere the key finds the row
        return JOBS.ID
                .eq(job.id())
                .and(JOBS.SLOT.eq(slot))
                .and(JOBS.SHARD.eq(job.shard()))
                .and(JOBS.STATUS.eq(Sql.RUNNING))
                .and(JOBS.LEASE_ID.eq(job.leaseId()));
    }

    static void requireLeased(Job job) {
        Objects.requireNonNull(job, "job");
        if (job.leaseId() == null) {
            throw new IllegalArgumentException("job " + job.id() + " has no lease id: it was not claimed with a lease "
                    + "(use the Job a leased claim returned)");
        }
    }
}

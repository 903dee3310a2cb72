package dev.locksmith.jobs.engine;

import dev.locksmith.internal.Observing;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueueConfig;
import java.util.function.Function;
import org.jooq.DSLContext;

/**
 * Every statement of the queue, in one home, grouped by what it does. A {@code JobQueue} is a
 * facade over one engine, and the workers' runtime calls the same engine. Nothing here calls back
 * into either. <b>Internal: not API.</b>
 *
 * <ul>
 *   <li>{@link #enqueue}: the insert, with ordering keys' locks and unique keys;</li>
 *   <li>{@link #claims}: the transactional, leased and two-phase claims, shard by shard on Citus;</li>
 *   <li>{@link #leases}: heartbeats, completion and giving back of leased jobs;</li>
 *   <li>{@link #settlement}: failures and handlers' controls, leased or transactional;</li>
 *   <li>{@link #twoPhase}: the steps of a two-phase job after its claim;</li>
 *   <li>{@link #admin}: cancel, retry and delete one job;</li>
 *   <li>{@link #maintenance}: rescue of expired leases, retention, vacuum;</li>
 *   <li>{@link #reads}: reading jobs and the queue's state;</li>
 *   <li>{@link #generations}: the jobs table's partitions, emptied by TRUNCATE;</li>
 *   <li>{@link #limits}: the concurrency limits per key.</li>
 * </ul>
 */
public final class QueueEngine {

    /** The insert. */
    public final Enqueuer enqueue;
    /** The claims. */
    public final Claims claims;
    /** Leased jobs' transitions. */
    public final Leases leases;
    /** Failures and controls. */
    public final Settlement settlement;
    /** Two-phase steps. */
    public final TwoPhaseSteps twoPhase;
    /** One job's administration. */
    public final JobAdmin admin;
    /** The table's upkeep. */
    public final Maintenance maintenance;
    /** Reads. */
    public final Reads reads;
    /** The jobs table's generations: emptying drained partitions, moving the current one on. */
    public final Generations generations;
    /** The concurrency limits per key. */
    public final Limits limits;

    private final QueueContext context;

    /**
     * The engine of one queue.
     *
     * @param dsl the construction context: its settings (schema mapping, execution mode) render
     *     the statements, and the statements that open their own transactions run on it
     * @param config the queue's settings
     * @param observing the observer to tell
     * @param jobs makes a job of the columns read
     * @param rows the columns a job was made of: the reverse of {@code jobs}
     */
    public QueueEngine(
            DSLContext dsl,
            JobQueueConfig config,
            Observing observing,
            Function<JobRow, Job> jobs,
            Function<Job, JobRow> rows) {
        this.context = new QueueContext(dsl, config, observing, jobs, rows);
        WakeUps wakeUps = new WakeUps(context);
        this.enqueue = new Enqueuer(context, wakeUps);
        this.claims = new Claims(context);
        this.leases = new Leases(context);
        this.settlement = new Settlement(context);
        this.twoPhase = new TwoPhaseSteps(context, settlement);
        this.admin = new JobAdmin(context, wakeUps);
        this.maintenance = new Maintenance(context);
        this.reads = new Reads(context);
        this.generations = new Generations(context);
        this.limits = new Limits(context);
    }

    /** {@return the queue's settings} */
    public JobQueueConfig config() {
        return context.config;
    }

    /** {@return the construction context} */
    public DSLContext dsl() {
        return context.dsl;
    }

    /** {@return the observer} */
    public Observing observing() {
        return context.observing;
    }

    /**
     * How many shards Citus splits the jobs table into, or 0 on one server.
     *
     * @param ctx where to look, the first time
     * @return the shard count, or 0
     */
    public int shards(DSLContext ctx) {
        return context.shards(ctx);
    }
}

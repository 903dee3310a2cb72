package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;

import dev.locksmith.audit.HorizonReport;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.RotatingPartitions;
import dev.locksmith.internal.RotatingPartitions.State;
import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Name;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * The jobs table's generations (issue 32; changelog {@code queue-015-jobs-generations}): jobs is
 * partitioned by {@code slot} into {@link #SLOTS} tables, {@code jobs_slot0} to
 * {@code jobs_slot3}, and a new job goes to the current generation's slot (the sequence
 * {@code job_generation}'s last value modulo {@link #SLOTS}, through the column default). A claim
 * and a completion leave dead row versions behind, which only VACUUM removes from a table, and no
 * VACUUM can while a long transaction, a replication slot or a prepared transaction holds the
 * MVCC horizon back: then every claim steps over more of them. Here they leave by
 * {@code TRUNCATE} of a whole partition instead, which no snapshot holds back. {@link #step()}
 * does one round of what keeps that going, and is safe to run from any number of workers and
 * JVMs at once:
 * <ol>
 *   <li>a partition that is not current and holds no job is emptied by {@code TRUNCATE}, under its
 *       ACCESS EXCLUSIVE lock, taken within {@link RotatingPartitions#LOCK_WAIT} (claims and inserts queue behind it
 *       meanwhile) and checked empty once held, so that no job is ever lost, whatever else runs;
 *       one that could not be locked is tried again later, less often each time;</li>
 *   <li>once the current partition has reached {@link #FULL_BYTES} while something holds the
 *       horizon back ({@link #HELD_XIDS}), or {@link #FULL_BYTES_UNHELD} while nothing does (VACUUM
 *       keeps a partition smaller than that), the generation moves to the next emptied slot, under
 *       an advisory lock so that two workers never both move it;</li>
 *   <li>when no slot is empty, the oldest generation's last pending jobs (at most
 *       {@link #MOVE_BATCH} of them, so a backlog is left to drain by claims) move into the current
 *       one, ids kept, so that a few scheduled or low-priority jobs do not hold a slot;</li>
 *   <li>once the current partition holds {@link #ANALYZE_BYTES} but the catalog still counts it
 *       empty, it is analyzed, once per generation ({@link #analyzeCurrent}).</li>
 * </ol>
 * A running job's partition is kept until the job ends (or its lease lapses and the job is
 * rescued and moved); a long job therefore holds one slot, and rotation goes on through the
 * others. On Citus's layout (jobs distributed by shard, not partitioned) nothing is done.
 * <b>Internal: not API.</b>
 */
public final class Generations {

    /** The partitions of jobs: {@code job_slot()} is the generation modulo this. */
    public static final int SLOTS = RotatingPartitions.SLOTS;

    /**
     * The current partition is full from this size on. At 1,000 jobs a second while the horizon is
     * held a partition grows by about 0.4 MB a second (two dead row versions per leased job), so a
     * generation lasts well under a second; claims then step over at most that many dead entries
     * (a claim's cost grows with them: the bench measured 1.8x the baseline with one-second
     * generations, 3.3x with five, and the worker's claim 5.9x with 1 MB ones). While VACUUM keeps
     * up a partition grows more slowly, and the generation moves only as rows accumulate.
     */
    static final long FULL_BYTES = 256L << 10;

    /**
     * The current partition is full from this size on while nothing holds the horizon back: then
     * VACUUM keeps the partition small, and each turn of the generations would only cost the
     * statements on jobs a wait behind a TRUNCATE's lock and a new plan. A partition this large
     * means VACUUM does not keep up (a drain of tens of thousands of jobs a second), and turning
     * helps again.
     */
    static final long FULL_BYTES_UNHELD = 64L << 20;

    /**
     * The horizon counts as held once its oldest holder ({@link HorizonReport#oldest()}) is this
     * many transactions old: a generation of {@link #FULL_BYTES} is a few hundred jobs, so a
     * holder this old keeps back dead rows of several generations.
     */
    static final long HELD_XIDS = 1_000;

    /** How long a look at the horizon holds: one statement at most once a second per queue engine. */
    private static final long HELD_CHECK_NANOS = Duration.ofSeconds(1).toNanos();

    /**
     * The current partition is analyzed ({@link #analyzeCurrent}) from this size on, if the catalog
     * still counts it empty. Above {@link #FULL_BYTES}, so that the quarter-megabyte generations of
     * a held horizon, which turn about every second, are not analyzed: each ANALYZE makes every
     * session plan its statements on jobs again, which there would cost more than scanning a
     * partition that small. A generation that grows to 64 MB is analyzed at 1 MB.
     */
    static final long ANALYZE_BYTES = 1L << 20;

    /** How many times {@link #lookingAgain} runs a statement on a job that may have moved. */
    static final int MOVED_LOOKS = 3;

    /** The most pending jobs moved out of the oldest generation at a time. */
    static final int MOVE_BATCH = 1_000;

    /**
     * What one step did.
     *
     * @param generation the current generation after the step
     * @param truncated partitions emptied by TRUNCATE
     * @param moved pending jobs moved into the current generation
     * @param advanced whether the generation moved
     * @param analyzed whether the current partition was analyzed ({@link #analyzeCurrent})
     */
    public record Step(long generation, int truncated, int moved, boolean advanced, boolean analyzed) {

        /** The step of a table that is not partitioned: nothing to do. */
        static final Step NONE = new Step(0, 0, 0, false, false);
    }

    /** Key of the advisory lock that serializes moving the generation: the bytes of "lsmgen" as a number. */
    private static final long LOCK_KEY = 0x6c736d67656eL;

    private final QueueContext context;
    private final RotatingPartitions partitions;
    private final HorizonReport horizon;
    private final java.util.concurrent.atomic.AtomicLong heldCheckedAt = new java.util.concurrent.atomic.AtomicLong();
    private volatile boolean held;
    /** The generation whose partition this engine last looked at for {@link #analyzeCurrent}. */
    private final java.util.concurrent.atomic.AtomicLong analyzeLookedAt =
            new java.util.concurrent.atomic.AtomicLong(-1);

    Generations(QueueContext context) {
        this.context = context;
        this.partitions = new RotatingPartitions(context.dsl, JOBS, "job_generation", LOCK_KEY);
        this.horizon = new HorizonReport(context.dsl);
    }

    /**
     * Whether jobs is partitioned into generations (it is on plain PostgreSQL once
     * {@code queue-015} ran; on Citus's layout it is not). Looked up once.
     *
     * @return whether {@link #step()} has anything to do
     */
    public boolean partitioned() {
        return schema() != null;
    }

    private @Nullable String schema() {
        return partitions.schema();
    }

    /**
     * One round: empties the partitions it can, then moves the generation on or makes room for it
     * to move (see the class comment). Runs in transactions of its own on the construction
     * context's connections.
     *
     * @return what it did
     */
    public Step step() {
        String schema = schema();
        if (schema == null) {
            return Step.NONE;
        }
        State state = partitions.state(context.dsl, schema);
        boolean analyzed = analyzeCurrent(schema, state);
        int truncated = partitions.truncateEmpty(schema, state, DSL.noCondition());
        long size = state.currentBytes();
        if (size < FULL_BYTES || (size < FULL_BYTES_UNHELD && !horizonHeld())) {
            return new Step(state.generation(), truncated, 0, false, analyzed);
        }
        RotatingPartitions.Advance advance = partitions.advance(schema, state, Generations::moveStragglers);
        return new Step(advance.generation(), truncated, advance.moved(), advance.advanced(), analyzed);
    }

    /**
     * Analyzes the current partition once it holds {@link #ANALYZE_BYTES} while the catalog still
     * counts it empty ({@code pg_class.relpages} 0), looking at most once per generation. Every
     * partition is empty when it becomes current (a TRUNCATE emptied it, and invalidated the plans
     * that read it, which are then made again while it is empty), and a generic plan made then
     * reads it with a sequential scan where the claim's {@code UPDATE} looks its ids up (and where
     * the ordering key's {@code NOT EXISTS} probes it, if a VACUUM found it empty), and keeps doing
     * so as the generation fills it: at 100,000 jobs a claim of 32 took 17.6 ms against 0.5 ms
     * (PostgreSQL 15). Nothing else makes those plans again until a VACUUM or ANALYZE of the
     * partition (autovacuum, or the workers' VACUUM of jobs, at most every few seconds); the
     * ANALYZE here updates the catalog's size, which makes every session plan again, and gives the
     * planner the new generation's statistics. {@code SKIP_LOCKED}: a partition another VACUUM or
     * ANALYZE holds is left to it. A role that may not analyze the partition gets a warning from
     * the server and nothing else.
     */
    private boolean analyzeCurrent(String schema, State state) {
        long generation = state.generation();
        if (state.bytes().get(state.current()) < ANALYZE_BYTES || analyzeLookedAt.get() == generation) {
            return false;
        }
        analyzeLookedAt.set(generation);
        Name partition = partitions.partition(schema, state.current());
        Integer pages = Errors.translating(() -> context.dsl.fetchValue(DSL.field(
                "(SELECT relpages FROM pg_catalog.pg_class WHERE oid = to_regclass({0}))",
                Integer.class, DSL.val(context.dsl.render(partition)))));
        if (pages == null || pages > 0) {
            return false;
        }
        return Errors.translating(() -> context.dsl.transactionResult(c -> {
            c.dsl().execute(DSL.query("ANALYZE (SKIP_LOCKED) {0}", DSL.table(partition)));
            return true;
        }));
    }

    /**
     * Whether the connection's role may turn the generations: {@code TRUNCATE} on each partition,
     * {@code UPDATE} on the sequence {@code job_generation}.
     *
     * @return true when jobs is partitioned and the role may do both
     */
    public boolean mayTurn() {
        return partitions.mayTurn();
    }

    /**
     * Whether something holds the MVCC horizon back by {@link #HELD_XIDS} transactions or more
     * (the report's statement, at most once per {@link #HELD_CHECK_NANOS}).
     */
    private boolean horizonHeld() {
        long now = System.nanoTime();
        if (now - heldCheckedAt.get() < HELD_CHECK_NANOS && heldCheckedAt.get() != 0) {
            return held;
        }
        held = horizon.oldest().map(h -> h.xminAge() >= HELD_XIDS).orElse(false);
        heldCheckedAt.set(now == 0 ? 1 : now);
        return held;
    }

    /**
     * Moves the pending jobs of slot {@code from} into slot {@code to}, ids and every column kept,
     * when there are at most {@link #MOVE_BATCH} of them (more is a backlog, which claims drain in
     * order); jobs locked by a claim in progress are skipped. One statement: {@code WITH moved AS
     * (DELETE ... RETURNING ...) INSERT ... SELECT}, so that a claim that meets a moved job skips it
     * (its row is locked until the move commits) rather than failing as it would on a row an
     * UPDATE moved between partitions.
     */
    private static int moveStragglers(DSLContext tx, int from, int to) {
        int pending = tx.fetchCount(DSL.selectOne()
                .from(JOBS)
                .where(JOBS.SLOT.eq((short) from))
                .and(JOBS.STATUS.eq(Sql.PENDING))
                .limit(MOVE_BATCH + 1));
        if (pending == 0 || pending > MOVE_BATCH) {
            return 0;
        }
        var picked = DSL.select(JOBS.ID)
                .from(JOBS)
                .where(JOBS.SLOT.eq((short) from))
                .and(JOBS.STATUS.eq(Sql.PENDING))
                .orderBy(JOBS.ID)
                .limit(MOVE_BATCH)
                .forUpdate()
                .skipLocked();
        return RotatingPartitions.move(tx, JOBS, JOBS.SLOT, from, JOBS.ID.in(picked), to);
    }

    /**
     * Runs {@code statement} on a live job again, as a new statement, while it did not find the
     * job and {@code live} still matches a row. The pending jobs {@link #moveStragglers} moves
     * leave their partition by a DELETE and come back, ids kept, by an INSERT into the current
     * one: a statement that waited for such a job's row meanwhile finds it deleted and the new one
     * outside its snapshot, and would take the job for finished or taken. A new statement (READ
     * COMMITTED: a new snapshot) sees the new row; under REPEATABLE READ the wait ends in a
     * serialization failure instead, for the caller to retry. A job moves at most once per turn
     * of the generations, so a few looks are enough.
     *
     * @param ctx the statement's context
     * @param live the job, as the statement expects to find it
     * @param statement the statement, run up to {@link #MOVED_LOOKS} times
     * @param found whether its result found the job
     * @return the last result
     */
    static <T> T lookingAgain(DSLContext ctx, Condition live, Supplier<T> statement, Predicate<T> found) {
        T result = statement.get();
        for (int look = 1; look < MOVED_LOOKS && !found.test(result) && ctx.fetchExists(JOBS, live); look++) {
            result = statement.get();
        }
        return result;
    }
}

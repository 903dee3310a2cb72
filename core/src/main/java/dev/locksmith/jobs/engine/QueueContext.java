package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;

import dev.locksmith.exception.PgErrors;
import dev.locksmith.internal.Distribution;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.Observing;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueueConfig;
import java.util.function.Function;
import org.jooq.DSLContext;

/**
 * What the engine's parts share, built once per queue: the construction context (its settings
 * render every statement; the statements that open their own transactions run on it), the
 * queue's settings, the schema mapping applied to callers' contexts, the observer, the Citus
 * layout (looked up once) and the pre-rendered hot statements. <b>Internal: not API.</b>
 */
final class QueueContext {

    final DSLContext dsl;
    final JobQueueConfig config;
    final SchemaMapping schema;
    final Observing observing;
    final Distribution distribution;
    final JobStatements statements;
    final KeyedClaims keyed;
    private final Function<JobRow, Job> jobs;
    private final Function<Job, JobRow> rows;
    private final RenderedQuery.RowMapper<Job> claimed;
    private final RenderedQuery.RowMapper<Job> claimedInTransaction;

    QueueContext(
            DSLContext dsl,
            JobQueueConfig config,
            Observing observing,
            Function<JobRow, Job> jobs,
            Function<Job, JobRow> rows) {
        this.dsl = dsl;
        this.config = config;
        this.schema = SchemaMapping.of(dsl);
        this.observing = observing;
        this.distribution = new Distribution(dsl, JOBS, JOBS.SHARD.getName());
        this.statements = new JobStatements(dsl);
        this.keyed = new KeyedClaims(dsl, distribution);
        this.jobs = jobs;
        this.rows = rows;
        this.claimed = row -> jobs.apply(JobRow.read(row, 0));
        // The transactional claim deletes the row; the attempt it starts is counted only when it
        // fails (written back with attempts + 1), so the job in hand counts it here, and its fence
        // is one above the last lease's, as a lease's would be.
        this.claimedInTransaction = row -> jobs.apply(JobRow.read(row, 1));
    }

    /** {@code tx}, rendering locksmith's tables in this queue's schema. */
    DSLContext on(DSLContext tx) {
        return schema.on(tx);
    }

    /** Shards of the Citus-distributed jobs table, or 0 on one server: see {@link Distribution}. */
    int shards(DSLContext ctx) {
        return distribution.shards(ctx);
    }

    /**
     * Whether {@code e} is Citus refusing a statement it cannot run across shards: a feature not
     * supported ({@code 0A000}) on a distributed {@code jobs}, however the {@code DSLContext}
     * wrapped it (Spring's jOOQ set-up translates into its own exceptions). A failure to tell is
     * added to {@code e} and counts as no: in a caller's transaction the refusal has aborted it.
     */
    boolean refusedByCitus(RuntimeException e) {
        if (!Errors.isDatabaseError(e) || !"0A000".equals(PgErrors.translate(e).sqlState())) {
            return false;
        }
        try {
            return shards(dsl) > 0;
        } catch (RuntimeException lookup) {
            e.addSuppressed(lookup);
            return false;
        }
    }

    Job job(JobRow row) {
        return jobs.apply(row);
    }

    /** The partition of {@code jobs} that {@code job} was read from: see {@link JobRow#slot()}. */
    short slot(Job job) {
        return rows.apply(job).slot();
    }

    /** Maps a row of {@link JobStatements#JOB_COLUMNS} to a job, its attempts as stored. */
    RenderedQuery.RowMapper<Job> claimed() {
        return claimed;
    }

    /** Maps a row deleted by a transactional claim to the job in hand, its attempt and fence counted. */
    RenderedQuery.RowMapper<Job> claimedInTransaction() {
        return claimedInTransaction;
    }
}

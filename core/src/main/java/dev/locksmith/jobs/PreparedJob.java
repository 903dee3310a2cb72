package dev.locksmith.jobs;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A job of a {@link TwoPhaseWorker} whose claiming transaction is prepared
 * ({@code PREPARE TRANSACTION}), with the transaction's global identifier. While it is prepared
 * the job's row stays locked: other claimers skip it, and nothing but {@code COMMIT PREPARED}
 * (the job is done, with the writes of {@link TwoPhaseJobHandler#handleInTransaction}) or
 * {@code ROLLBACK PREPARED} (the job is back in the queue) ends it.
 *
 * <p>The {@link #gid()} names the job: it is the same for every attempt of the job and unique
 * on the PostgreSQL cluster and beyond it (see {@link TwoPhaseWorker}). Pass it to the external
 * system as the side effect's idempotency key, so that an attempt repeated after an ambiguous
 * failure is recognised there, and so that {@link SideEffectCheck} can ask whether it happened.
 *
 * <p>Only locksmith creates these: the constructor is not public.
 */
public final class PreparedJob {

    private final Job job;
    private final String gid;

    PreparedJob(Job job, String gid) {
        this.job = Objects.requireNonNull(job, "job");
        this.gid = Objects.requireNonNull(gid, "gid");
    }

    /**
     * The job as its claim left it: its payload, kind, and {@link Job#attempts()}, the number of
     * this attempt (1 for the first).
     *
     * @return the job
     */
    public Job job() {
        return job;
    }

    /**
     * The prepared transaction's global identifier, such as
     * {@code locksmith:6f0e3c1a9b2d4e58:16384:locksmith:42}: the side effect's idempotency key.
     *
     * @return the gid, at most 121 characters of {@code [0-9a-z_:]}
     */
    public String gid() {
        return gid;
    }

    @Override
    public boolean equals(@Nullable Object other) {
        return other instanceof PreparedJob that && job.equals(that.job) && gid.equals(that.gid);
    }

    @Override
    public int hashCode() {
        return Objects.hash(job, gid);
    }

    @Override
    public String toString() {
        return "PreparedJob[gid=" + gid + ", job=" + job.id() + " (" + job.kind() + ") of queue " + job.queue() + "]";
    }
}

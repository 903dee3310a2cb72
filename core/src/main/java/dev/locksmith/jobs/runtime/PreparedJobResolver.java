package dev.locksmith.jobs.runtime;

import dev.locksmith.exception.LocksmithException;
import dev.locksmith.internal.Observing;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.PreparedJob;
import dev.locksmith.jobs.ResolveResult;
import dev.locksmith.jobs.SideEffectCheck;
import dev.locksmith.jobs.SideEffectStatus;
import dev.locksmith.jobs.engine.PreparedTransactions;
import dev.locksmith.jobs.engine.QueueEngine;
import dev.locksmith.observe.JobEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.jooq.DSLContext;
import org.slf4j.Logger;

/**
 * One round of a {@code TwoPhaseWorker}'s resolver: finds the prepared transactions of its
 * database, schema and queue older than the threshold, asks the {@link SideEffectCheck} about
 * each, and commits or rolls back. Several resolvers may run at once (one per worker, in every
 * JVM): all may ask about a transaction, the first to finish it wins, and the others find it gone
 * ({@code 42704}) or being finished ({@code 55000}) and skip it. It never touches a prepared
 * transaction whose gid is not one of this database's and schema's (see
 * {@link PreparedTransactions}), nor one of another queue's jobs: that queue's workers have the
 * check that knows its side effect.
 */
final class PreparedJobResolver {

    private final TwoPhaseConnections connections;
    private final QueueEngine engine;
    private final String queueName;
    private final SideEffectCheck check;
    private final Duration olderThan;
    private final Observing observing;
    private final Logger log;
    private final BiFunction<Job, String, PreparedJob> preparedJobs;

    PreparedJobResolver(
            TwoPhaseConnections connections,
            QueueEngine engine,
            String queueName,
            SideEffectCheck check,
            Duration olderThan,
            Observing observing,
            Logger log,
            BiFunction<Job, String, PreparedJob> preparedJobs) {
        this.connections = connections;
        this.engine = engine;
        this.queueName = queueName;
        this.check = check;
        this.olderThan = olderThan;
        this.observing = observing;
        this.log = log;
        this.preparedJobs = preparedJobs;
    }

    ResolveResult resolve(PreparedTransactions transactions) {
        List<PreparedJob> found = connections.autoCommit(ctx -> find(ctx, transactions));
        int committed = 0;
        int rolledBack = 0;
        int undecided = 0;
        for (PreparedJob prepared : found) {
            switch (ask(prepared)) {
                case HAPPENED -> {
                    Finished finished = finish(prepared, ctx -> transactions.commit(ctx, prepared.gid()));
                    if (finished == Finished.HERE) {
                        committed++;
                        observing.jobEvent(JobEvent.COMPLETED, prepared.job());
                        log.info(
                                "resolver committed {} (job {} of queue {}): its side effect happened",
                                prepared.gid(),
                                prepared.job().id(),
                                queueName);
                    } else if (finished == Finished.FAILED) {
                        undecided++;
                    }
                }
                case NOT_HAPPENED -> {
                    Finished finished = finish(prepared, ctx -> transactions.rollback(ctx, prepared.gid()));
                    if (finished == Finished.HERE) {
                        rolledBack++;
                        requeue(prepared);
                    } else if (finished == Finished.FAILED) {
                        undecided++;
                    }
                }
                case UNKNOWN -> {
                    undecided++;
                    log.info(
                            "resolver left {} (job {} of queue {}) prepared: its side effect is unknown so far; asking "
                                    + "again next round",
                            prepared.gid(),
                            prepared.job().id(),
                            queueName);
                }
            }
        }
        return new ResolveResult(committed, rolledBack, undecided);
    }

    /**
     * The prepared jobs of this queue older than the threshold, each as its claim left it: the
     * prepared transaction's delete is not committed, so every other session still reads the row
     * (reading takes no lock, and waits for none).
     */
    private List<PreparedJob> find(DSLContext ctx, PreparedTransactions transactions) {
        List<PreparedTransactions.Prepared> prepared = transactions.olderThan(ctx, olderThan);
        if (prepared.isEmpty()) {
            return List.of();
        }
        Map<Long, Job> jobs = engine.reads.findAll(
                ctx, prepared.stream().map(PreparedTransactions.Prepared::jobId).toList());
        List<PreparedJob> ours = new ArrayList<>();
        for (PreparedTransactions.Prepared p : prepared) {
            Job job = jobs.get(p.jobId());
            if (job == null) {
                log.warn(
                        "prepared transaction {} (prepared at {}) names job {}, which this schema does not have; "
                                + "left alone",
                        p.gid(),
                        p.preparedAt(),
                        p.jobId());
            } else if (job.queue().equals(queueName)) {
                ours.add(preparedJobs.apply(job, p.gid()));
            }
        }
        return ours;
    }

    private SideEffectStatus ask(PreparedJob prepared) {
        JobLogging.Scope mdc = JobLogging.mdc(prepared.job(), prepared.job().attempts());
        try {
            SideEffectStatus status = check.check(prepared);
            if (status == null) {
                log.warn("SideEffectCheck returned null for {}; treated as UNKNOWN", prepared.gid());
                return SideEffectStatus.UNKNOWN;
            }
            return status;
        } catch (Exception | Error e) {
            log.warn("SideEffectCheck failed for {}; treated as UNKNOWN, asking again next round", prepared.gid(), e);
            return SideEffectStatus.UNKNOWN;
        } finally {
            mdc.close();
        }
    }

    /** How {@link #finish} ended. */
    private enum Finished {
        /** This resolver finished the transaction. */
        HERE,
        /** Another session finished it first (another resolver, or its worker after all). */
        ELSEWHERE,
        /** Finishing it failed (logged): the next round tries again. */
        FAILED
    }

    /** Runs {@code step}, {@code COMMIT PREPARED} or {@code ROLLBACK PREPARED}, on a connection of its own. */
    private Finished finish(PreparedJob prepared, java.util.function.Consumer<DSLContext> step) {
        try {
            connections.autoCommit(ctx -> {
                step.accept(ctx);
                return null;
            });
            return Finished.HERE;
        } catch (LocksmithException e) {
            if (PreparedTransactions.settledElsewhere(e)) {
                log.debug("{} was finished by another session meanwhile", prepared.gid(), e);
                return Finished.ELSEWHERE;
            }
            log.warn("resolver could not finish {}; trying again next round", prepared.gid(), e);
            return Finished.FAILED;
        }
    }

    /**
     * Records the failure of a job whose transaction this resolver rolled back (its claim counted
     * the attempt): backoff, or {@code failed} after the last attempt.
     */
    private void requeue(PreparedJob prepared) {
        Job job = prepared.job();
        try {
            FailResult result = connections.autoCommit(ctx -> engine.twoPhase.fail(
                    ctx,
                    job,
                    "side effect did not happen (SideEffectCheck said NOT_HAPPENED for " + prepared.gid()
                            + "): the prepared transaction was rolled back by the resolver"));
            log.info(
                    "resolver rolled back {} (job {} of queue {}): its side effect did not happen; attempt {} of {} {}",
                    prepared.gid(),
                    job.id(),
                    queueName,
                    job.attempts(),
                    job.maxAttempts(),
                    switch (result.outcome()) {
                        case RETRY_SCHEDULED ->
                            "failed, the job runs again at " + result.retryAt().orElse(null);
                        case FAILED -> "was the last: the job failed for good";
                        case LEASE_LOST -> "was not recorded: another claimer took the job meanwhile";
                        // a resolver records failures only, never a handler's control
                        case SNOOZED, CANCELLED -> "ended " + result.outcome();
                    });
        } catch (LocksmithException e) {
            log.warn(
                    "resolver rolled back {} (job {} of queue {}); the job is back in the queue (its attempt counted), "
                            + "but the failure could not be recorded: it runs again once its hold runs out",
                    prepared.gid(),
                    job.id(),
                    queueName,
                    e);
        }
    }
}

package dev.locksmith.jobs.runtime;

import dev.locksmith.internal.CheckedFailure;
import dev.locksmith.internal.ErrorTexts;
import dev.locksmith.internal.Savepoints;
import dev.locksmith.jobs.BatchJobHandler;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import dev.locksmith.jobs.engine.QueueEngine;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.util.ArrayList;
import java.util.List;
import org.jooq.DSLContext;

/**
 * Transactional mode ({@code TransactionalWorker}): each loop thread opens a transaction, claims
 * a batch in it, hands it to the handler and commits, so the handler's writes and the jobs'
 * removal commit together. After a batch that failed, the thread isolates jobs (one at a time
 * under a savepoint, a failing one written back with its attempt counted) until a batch runs with
 * no failure. Jobs are reported claimed and completed once their batch committed.
 * <b>Internal: not API.</b>
 */
public final class TransactionalMode implements Mode {

    private final WorkerRuntime runtime;
    private final QueueEngine engine;
    private final RuntimeSettings settings;
    private final BatchJobHandler handler;
    private final Claim claim;
    private final boolean isolateEachJob;
    /** Per loop thread: whether it hands the handler one job at a time. */
    private final boolean[] isolate;

    /**
     * Transactional mode for {@code runtime}'s worker.
     *
     * @param runtime the worker's runtime
     * @param handler the work for each batch
     * @param batchSize jobs claimed per transaction
     * @param isolateEachJob whether every job runs alone under a savepoint
     */
    public TransactionalMode(WorkerRuntime runtime, BatchJobHandler handler, int batchSize, boolean isolateEachJob) {
        this.runtime = runtime;
        this.engine = runtime.engine();
        this.settings = runtime.settings();
        this.handler = handler;
        this.claim = new Claim(settings.queue(), batchSize, settings.shards());
        this.isolateEachJob = isolateEachJob;
        this.isolate = new boolean[settings.threads()];
        java.util.Arrays.fill(isolate, isolateEachJob);
    }

    @Override
    public String description() {
        return "transactional worker";
    }

    @Override
    public int connectionsNeeded() {
        return settings.threads() + (settings.listensOnPool() ? 1 : 0);
    }

    @Override
    public int loops() {
        return settings.threads();
    }

    @Override
    public String loopName(int index) {
        return "tx-" + index;
    }

    @Override
    public Turn turn(int loop) {
        Batch batch = new Batch();
        boolean isolating = isolate[loop];
        boolean committed = false;
        try {
            engine.dsl().transaction(c -> batch.run(c.dsl(), isolating));
            batch.committed();
            committed = true;
            isolate[loop] = isolateEachJob || batch.failures > 0;
        } catch (Throwable e) {
            JobControl control = Controls.find(e);
            if (!batch.claimDone) {
                // nothing was claimed (the database or, on Citus, a worker node is unreachable):
                // nothing to isolate, try again after the poll interval
                settings.log()
                        .warn("claiming from queue {} failed, retrying after the poll interval", claim.queue(), e);
            } else if (control != null && !isolating) {
                // A decision for one job of the batch: no error, but the batch must run again one
                // job at a time for the control to reach that job alone.
                settings.log()
                        .debug(
                                "batch of {} jobs on queue {} rolled back: its handler threw {} for one of them; "
                                        + "isolating jobs",
                                batch.jobs.size(),
                                claim.queue(),
                                control.getMessage());
            } else {
                settings.log()
                        .warn(
                                "batch of {} jobs on queue {} rolled back, its jobs are back in the queue{}",
                                batch.jobs.size(),
                                claim.queue(),
                                isolating ? "" : "; isolating jobs from now on",
                                e);
            }
            isolate[loop] = isolating || batch.claimDone;
        }
        if (runtime.running()) {
            runtime.upkeep();
        }
        if (!committed) {
            return Turn.EMPTY;
        }
        // A committed keyed job makes the next job of its key claimable, and no NOTIFY says so:
        // claim again at once rather than after the poll interval. On Citus a claim takes its jobs
        // from one shard: a partial batch says nothing of the other shards, so only an empty one
        // (every shard tried) waits.
        int claimed = batch.jobs.size();
        if (claimed >= claim.limit() || batch.keyed() || (claimed > 0 && engine.shards(engine.dsl()) > 0)) {
            return Turn.MORE;
        }
        return claimed > 0 ? Turn.FOUND : Turn.EMPTY;
    }

    /** One transaction's worth of jobs. */
    private final class Batch {
        /** Whether the claim statement returned (else it failed, and nothing was claimed). */
        boolean claimDone;

        List<Job> jobs = List.of();
        int failures;
        /** Jobs whose handler succeeded: completed when the transaction commits. */
        final List<Job> handled = new ArrayList<>();

        boolean keyed() {
            return jobs.stream().anyMatch(job -> job.orderingKey() != null);
        }

        /** The batch's transaction committed: its jobs count as claimed, and those handled as completed. */
        void committed() {
            jobs.forEach(job -> runtime.observing().jobEvent(JobEvent.CLAIMED, job));
            handled.forEach(job -> runtime.observing().jobEvent(JobEvent.COMPLETED, job));
            runtime.processed(jobs.size());
        }

        void run(DSLContext tx, boolean isolating) throws Exception {
            jobs = engine.claims.inTransactionUnreported(tx, claim);
            claimDone = true;
            if (jobs.isEmpty()) {
                return;
            }
            if (!isolating) {
                Observation handling = runtime.observing().start(new Operation.HandleJobs(jobs));
                JobLogging.Scope mdc = JobLogging.mdc(jobs);
                try {
                    handler.handle(jobs, tx);
                } catch (Exception | Error e) {
                    handling.error(e);
                    throw e;
                } finally {
                    mdc.close();
                }
                handling.end(Outcome.OK);
                handled.addAll(jobs);
                engine.claims.keepDone(tx, handled);
                return;
            }
            for (Job job : jobs) {
                runIsolated(tx, job);
            }
            engine.claims.keepDone(tx, handled);
        }

        /** One job alone under a savepoint; a failure is written back in the claiming transaction. */
        private void runIsolated(DSLContext tx, Job job) {
            JobLogging.Scope mdc = JobLogging.mdc(job, job.attempts());
            Observation handling = runtime.observing().start(new Operation.HandleJobs(List.of(job)));
            try {
                Savepoints.unit(tx, () -> {
                    try {
                        handler.handle(List.of(job), tx);
                    } catch (RuntimeException | Error e) {
                        throw e;
                    } catch (Exception checked) {
                        throw new CheckedFailure(checked);
                    }
                    return null;
                });
                handling.end(Outcome.OK);
                handled.add(job);
            } catch (RuntimeException | Error e) {
                Throwable cause = e instanceof CheckedFailure wrapped ? wrapped.checked() : e;
                JobControl control = Controls.find(cause);
                failures++;
                // Written back while the handler's observation is still open, as a leased worker
                // records a failure: the write's span (locksmith.job.fail) is part of the job's.
                FailResult result = null;
                try {
                    result = control == null
                            ? engine.settlement.requeueFailed(tx, job, ErrorTexts.describe(cause))
                            : engine.settlement.requeue(tx, job, control);
                    JobLogging.handlerFailed(
                            settings.log(), settings.handlerFailureLogLevel(), job, job.attempts(), cause, result);
                } finally {
                    Handling.end(handling, cause, result);
                }
            } finally {
                mdc.close();
            }
        }
    }
}

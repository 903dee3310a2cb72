package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assumptions.assumeThat;

import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.PreparedJob;
import dev.locksmith.jobs.SideEffectStatus;
import dev.locksmith.jobs.TwoPhaseJobHandler;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.jobs.Worker;
import java.time.Duration;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;

/**
 * The worker contract in two-phase mode: exactly once, the handler's writes in the transaction
 * that is prepared (the side effect here does nothing). {@code close()} does not interrupt a
 * handler: a side effect cut short would be repeated under its idempotency key, so the thread
 * finishes its job. Skipped on a server without prepared transactions, as every two-phase test.
 */
class TwoPhaseWorkerContractTest extends WorkerContractTest {

    @BeforeEach
    void needsPreparedTransactions() {
        assumeThat(TwoPhaseTest.maxPreparedTransactions(dsl))
                .as("max_prepared_transactions (0 on CI's PostgreSQL service; TwoPhaseRequirementTest covers it)")
                .isGreaterThanOrEqualTo(10);
    }

    @Override
    Worker worker(JobQueue queue, String name, Work work, Duration pollInterval, Duration grace) {
        TwoPhaseJobHandler handler = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) throws Exception {
                work.run(job, tx);
            }

            @Override
            public void performSideEffect(PreparedJob job) {}
        };
        return TwoPhaseWorker.builder(queue, name, handler, job -> SideEffectStatus.UNKNOWN)
                .threads(2)
                .pollInterval(pollInterval)
                .minPollInterval(pollInterval) // a fixed poll: the contract's timings assume one
                .shutdownGrace(grace)
                .build();
    }

    @Override
    boolean closeInterrupts() {
        return false;
    }
}

package dev.locksmith.it.jobs;

import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.Worker;
import java.time.Duration;

/**
 * The worker contract in transactional mode: exactly once for work in the same database. Batches
 * of several jobs, so that a failure also exercises the rollback of a batch and the isolation of
 * its jobs. A claimed job's row is gone once its batch commits, so finished jobs are not kept.
 */
class TransactionalWorkerContractTest extends WorkerContractTest {

    @Override
    Worker worker(JobQueue queue, String name, Work work, Duration pollInterval, Duration grace) {
        return TransactionalWorker.builder(queue, name, (jobs, tx) -> {
                    for (Job job : jobs) {
                        work.run(job, tx);
                    }
                })
                .threads(2)
                .batchSize(4)
                .pollInterval(pollInterval)
                .minPollInterval(pollInterval) // a fixed poll: the contract's timings assume one
                .shutdownGrace(grace)
                .build();
    }
}

package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.Await;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.Worker;
import java.time.Duration;
import java.time.OffsetDateTime;

/**
 * The worker contract in leased mode: at least once (exactly once while no lease lapses). A
 * handler that outlives {@code close()} keeps its lease, heartbeated past its first expiry, so that
 * no rescue can hand its job to another worker while it still runs.
 */
class LeasedWorkerContractTest extends WorkerContractTest {

    private static final Duration LEASE = Duration.ofSeconds(2);

    @Override
    Worker worker(JobQueue queue, String name, Work work, Duration pollInterval, Duration grace) {
        return JobWorker.builder(queue, name, work::run)
                .threads(2)
                .lease(LEASE)
                .pollInterval(pollInterval)
                .minPollInterval(pollInterval) // a fixed poll: the contract's timings assume one
                .shutdownGrace(grace)
                .build();
    }

    @Override
    void stillHeldWhileStuck(long id) throws Exception {
        OffsetDateTime first = lockedUntil(id);
        // The lease the claim gave ran out by now, had nothing extended it: the worker heartbeats
        // the job of its stubborn handler after close(), so rescue finds nothing to take.
        Await.until(
                "the lease was extended past its first expiry after close()",
                WAIT,
                () -> lockedUntil(id).isAfter(first.plus(LEASE)));
        assertThat(queue.rescueExpired()).isZero();
        assertThat(status(id)).isEqualTo("running");
    }

    private OffsetDateTime lockedUntil(long id) {
        return dsl.select(JOBS.LOCKED_UNTIL).from(JOBS).where(JOBS.ID.eq(id)).fetchSingle(JOBS.LOCKED_UNTIL);
    }
}

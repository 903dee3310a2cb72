package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Backends;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.PreparedJob;
import dev.locksmith.jobs.ResolveResult;
import dev.locksmith.jobs.TwoPhaseJobHandler;
import dev.locksmith.jobs.TwoPhaseSeams;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.observe.JobEvent;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;

/**
 * The worker's connection killed ({@code pg_terminate_backend}, waiting until the backend is gone)
 * between {@code PREPARE TRANSACTION} and {@code COMMIT PREPARED} / {@code ROLLBACK PREPARED},
 * through the worker's test seam. The transaction stays prepared and the job locked; the resolver
 * then commits when the check finds the side effect in the ledger, and rolls back (the job
 * claimable again) when it does not, and the job's side effect is in the ledger exactly once.
 */
class TwoPhaseKilledConnectionTest extends TwoPhaseTest {

    private static final Duration POLL = Duration.ofMillis(50);

    /** Terminates {@code pid} and waits until it has exited. */
    private void kill(int pid) {
        Backends.terminate(dsl, pid);
    }

    private TwoPhaseWorker resolver(String queueName) {
        return TwoPhaseWorker.builder(
                        new JobQueue(Locksmith.of(pool), FAST_RETRY), queueName, recording(), ledgerCheck())
                .resolveOlderThan(Duration.ZERO)
                .build();
    }

    @Test
    void killedBeforeCommitPreparedTheJobStaysPreparedAndTheResolverCommitsIt() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("pay", "charge"));
        CountDownLatch killed = new CountDownLatch(1);
        try (HikariDataSource workerPool = TestPostgres.pool(database, 4);
                TwoPhaseWorker worker = TwoPhaseSeams.beforeFinish(
                                TwoPhaseWorker.builder(workerPool, "pay", recording(), ledgerCheck())
                                        .threads(1)
                                        .listen(false)
                                        .pollInterval(POLL),
                                (job, commit, pid) -> {
                                    if (commit) {
                                        kill(pid);
                                        killed.countDown();
                                    }
                                })
                        .build()
                        .start()) {
            await(killed, "the connection about to COMMIT PREPARED was killed");
        } // close() returns once the thread is past its failed COMMIT PREPARED

        assertThat(preparedGids(dsl)).containsExactly(gidOf(id));
        assertThat(claimableIds("pay")).as("the prepared job stays locked").isEmpty();
        assertThat(results()).as("the handler's writes are not committed").isEmpty();
        assertThat(effects()).as("the side effect happened").containsExactly(entry(id, 1));

        assertThat(resolver("pay").resolveNow()).isEqualTo(new ResolveResult(1, 0, 0));

        assertThat(queue.find(dsl, id)).isEmpty();
        assertThat(results()).containsExactly(entry(id, 1));
        assertThat(effects()).containsExactly(entry(id, 1));
    }

    @Test
    void killedBeforeRollbackPreparedTheResolverRollsBackAndTheJobRunsAgainOnce() throws Exception {
        long id = queue.enqueue(
                dsl, NewJob.builder("pay", "charge").maxAttempts(3).build());
        TwoPhaseJobHandler firstAttemptFails = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                tx.execute("INSERT INTO twophase_results VALUES (?)", job.id());
            }

            @Override
            public void performSideEffect(PreparedJob job) throws IOException {
                if (job.job().attempts() == 1) {
                    throw new IOException("provider unreachable");
                }
                recordEffect(job);
            }
        };
        CountDownLatch killed = new CountDownLatch(1);
        try (HikariDataSource workerPool = TestPostgres.pool(database, 4);
                TwoPhaseWorker worker = TwoPhaseSeams.beforeFinish(
                                TwoPhaseWorker.builder(workerPool, "pay", firstAttemptFails, ledgerCheck())
                                        .threads(1)
                                        .listen(false)
                                        .pollInterval(POLL),
                                (job, commit, pid) -> {
                                    if (!commit) {
                                        kill(pid);
                                        killed.countDown();
                                    }
                                })
                        .build()
                        .start()) {
            await(killed, "the connection about to ROLLBACK PREPARED was killed");
        }

        assertThat(preparedGids(dsl)).containsExactly(gidOf(id));
        assertThat(claimableIds("pay")).isEmpty();
        assertThat(effects()).isEmpty();

        assertThat(resolver("pay").resolveNow()).isEqualTo(new ResolveResult(0, 1, 0));

        Job back = queue.find(dsl, id).orElseThrow();
        assertThat(back.status()).isEqualTo(JobStatus.PENDING);
        assertThat(back.attempts()).isEqualTo(1);
        assertThat(claimableIds("pay")).as("claimable again").containsExactly(id);
        assertThat(results()).isEmpty();

        CountDownLatch committed = new CountDownLatch(1);
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        observed(counting(JobEvent.COMPLETED, committed)), "pay", firstAttemptFails, ledgerCheck())
                .threads(1)
                .listen(false)
                .pollInterval(POLL)
                .build()
                .start()) {
            await(committed, "the job ran again");
        }
        assertThat(results()).containsExactly(entry(id, 1));
        assertThat(effects()).containsExactly(entry(id, 1));
    }

    @Test
    void killingTheSessionThatPreparedLeavesTheTransactionPreparedAndTheJobLocked() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("pay", "charge"));
        List<String> seenAfterKill = new CopyOnWriteArrayList<>();
        List<Long> claimableAfterKill = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        try (HikariDataSource workerPool = TestPostgres.pool(database, 4);
                TwoPhaseWorker worker = TwoPhaseSeams.afterPrepare(
                                TwoPhaseWorker.builder(workerPool, "pay", recording(), ledgerCheck())
                                        .threads(1)
                                        .listen(false)
                                        .pollInterval(POLL),
                                (job, pid) -> {
                                    kill(pid);
                                    seenAfterKill.addAll(preparedGids(dsl));
                                    claimableAfterKill.addAll(claimableIds("pay"));
                                    done.countDown();
                                })
                        .build()
                        .start()) {
            await(done, "the session that prepared was killed");
        }
        assertThat(seenAfterKill).as("prepared after its session died").containsExactly(gidOf(id));
        assertThat(claimableAfterKill).as("still locked after its session died").isEmpty();
        // The worker's COMMIT PREPARED went through on another connection, or failed on the dead
        // one the pool handed back; the resolver settles the second case, and either way the job
        // is done once.
        ResolveResult resolved = resolver("pay").resolveNow();
        assertThat(resolved.rolledBack() + resolved.undecided()).isZero();
        assertThat(queue.find(dsl, id)).isEmpty();
        assertThat(results()).containsExactly(entry(id, 1));
        assertThat(effects()).containsExactly(entry(id, 1));
    }
}

package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Backoff;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Batches claimed and handled in one transaction; a failing job is isolated under a savepoint,
 * retried with backoff and failed after max_attempts, while the rest of its batch commits.
 */
class TransactionalWorkerTest extends DatabaseTest {

    private JobQueue queue;

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_HISTORY).execute();
        dsl.execute("DROP TABLE IF EXISTS batch_results");
        dsl.execute("CREATE TABLE batch_results (job_id bigint NOT NULL)");
        queue = new JobQueue(dsl);
    }

    private void awaitEmptyQueue(String q) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (dsl.fetchCount(JOBS, JOBS.QUEUE.eq(q)) > 0 && System.nanoTime() < deadline) {
            dsl.execute("SELECT pg_sleep(0.02)");
        }
    }

    @Test
    void drainsEveryJobExactlyOnceInBatches() throws InterruptedException {
        List<Long> ids = queue.enqueueAll(dsl, Collections.nCopies(2000, NewJob.of("batch", "noop")));
        try (TransactionalWorker worker = TransactionalWorker.builder(pool, "batch", (jobs, tx) -> {
                    for (Job job : jobs) {
                        tx.execute("INSERT INTO batch_results VALUES (?)", job.id());
                    }
                })
                .threads(4)
                .batchSize(50)
                .pollInterval(Duration.ofMillis(50))
                .build()
                .start()) {
            awaitEmptyQueue("batch");
            // a batch's commit is visible before its thread counts it: wait for the count too
            Await.until("2000 jobs counted", Duration.ofSeconds(10), () -> worker.processed() >= 2000);
            assertThat(worker.processed()).isEqualTo(2000);
        }
        List<Long> done = dsl.fetchValues("SELECT job_id FROM batch_results").stream()
                .map(v -> ((Number) v).longValue())
                .toList();
        assertThat(done).hasSize(2000).containsExactlyInAnyOrderElementsOf(ids);
    }

    /** Waits until no job of {@code q} is pending or running (failed rows stay). */
    private void awaitSettled(String q) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (dsl.fetchCount(JOBS, JOBS.QUEUE.eq(q).and(JOBS.STATUS.in("pending", "running"))) > 0
                && System.nanoTime() < deadline) {
            dsl.execute("SELECT pg_sleep(0.02)");
        }
    }

    private static final JobQueueConfig FAST_RETRY = JobQueueConfig.builder()
            .retryBackoff(new Backoff(Duration.ofMillis(1), Duration.ofMillis(1), 1.0, 0.0))
            .build();

    private List<Long> recorded() {
        return dsl.fetchValues("SELECT job_id FROM batch_results").stream()
                .map(v -> ((Number) v).longValue())
                .toList();
    }

    @ParameterizedTest(name = "isolateEachJob={0}")
    @ValueSource(booleans = {false, true})
    void aPoisonJobIsRetriedWithBackoffAndEndsFailedWhileTheRestOfItsBatchesCommit(boolean isolateEachJob) {
        // the poison job comes first in claim order, so without isolation it would sink every batch it is in
        long poison = queue.enqueue(
                dsl,
                NewJob.builder("poison", "poison").priority(0).maxAttempts(3).build());
        List<Long> good = queue.enqueueAll(dsl, Collections.nCopies(19, NewJob.of("poison", "ok")));
        try (TransactionalWorker worker = TransactionalWorker.builder(
                        new JobQueue(Locksmith.of(pool), FAST_RETRY), "poison", (jobs, tx) -> {
                            for (Job job : jobs) {
                                tx.execute("INSERT INTO batch_results VALUES (?)", job.id());
                                if (job.kind().equals("poison")) {
                                    throw new java.io.IOException("poisoned payload in job " + job.id());
                                }
                            }
                        })
                .threads(2)
                .batchSize(5)
                .pollInterval(Duration.ofMillis(20))
                .listen(false)
                .isolateEachJob(isolateEachJob)
                .build()
                .start()) {
            awaitSettled("poison");
            assertThat(worker.liveThreads()).isEqualTo(2);
        }
        // every good job committed exactly once; nothing the poison handler wrote survived
        assertThat(recorded()).containsExactlyInAnyOrderElementsOf(good);
        Job failed = queue.find(dsl, poison).orElseThrow();
        assertThat(failed.status()).isEqualTo(JobStatus.FAILED);
        assertThat(failed.attempts()).isEqualTo(3);
        assertThat(failed.lastError()).contains("IOException", "poisoned payload in job " + poison);
        assertThat(dsl.fetchCount(JOBS, JOBS.QUEUE.eq("poison")))
                .as("the failed job left jobs")
                .isZero();
        assertThat(dsl.fetchCount(JOB_HISTORY, JOB_HISTORY.QUEUE.eq("poison"))).isEqualTo(1);
    }

    @Test
    void anErrorFromTheHandlerLeavesEveryThreadAliveAndLaterJobsAreConsumed() {
        long bad = queue.enqueue(
                dsl, NewJob.builder("errors", "bug").priority(0).maxAttempts(1).build());
        List<Long> later = queue.enqueueAll(dsl, Collections.nCopies(20, NewJob.of("errors", "ok")));
        try (TransactionalWorker worker = TransactionalWorker.builder(
                        new JobQueue(Locksmith.of(pool), FAST_RETRY), "errors", (jobs, tx) -> {
                            for (Job job : jobs) {
                                if (job.kind().equals("bug")) {
                                    throw new AssertionError("a bug in the handler");
                                }
                                tx.execute("INSERT INTO batch_results VALUES (?)", job.id());
                            }
                        })
                .threads(2)
                .batchSize(5)
                .pollInterval(Duration.ofMillis(20))
                .listen(false)
                .build()
                .start()) {
            awaitSettled("errors");
            assertThat(worker.liveThreads()).isEqualTo(2);
        }
        assertThat(recorded()).containsExactlyInAnyOrderElementsOf(later);
        Job failed = queue.find(dsl, bad).orElseThrow();
        assertThat(failed.status()).isEqualTo(JobStatus.FAILED);
        assertThat(failed.lastError()).contains("AssertionError", "a bug in the handler");
    }

    @Test
    void aHandlerThatSwallowsADatabaseErrorStillEndsItsJobFailedAndTheOthersCommit() {
        // the swallowed error aborts the transaction: the batch cannot commit, and under a
        // savepoint the RELEASE fails; both must end in the job's failure being recorded
        long swallowing = queue.enqueue(
                dsl,
                NewJob.builder("swallow", "swallow").priority(0).maxAttempts(2).build());
        List<Long> good = queue.enqueueAll(dsl, Collections.nCopies(9, NewJob.of("swallow", "ok")));
        try (TransactionalWorker worker = TransactionalWorker.builder(
                        new JobQueue(Locksmith.of(pool), FAST_RETRY), "swallow", (jobs, tx) -> {
                            for (Job job : jobs) {
                                if (job.kind().equals("swallow")) {
                                    try {
                                        tx.execute("SELECT 1 / 0");
                                    } catch (org.jooq.exception.DataAccessException ignored) {
                                        // a handler bug: the transaction is aborted now
                                    }
                                } else {
                                    tx.execute("INSERT INTO batch_results VALUES (?)", job.id());
                                }
                            }
                        })
                .threads(1)
                .batchSize(5)
                .pollInterval(Duration.ofMillis(20))
                .listen(false)
                .build()
                .start()) {
            awaitSettled("swallow");
        }
        assertThat(recorded()).containsExactlyInAnyOrderElementsOf(good);
        Job failed = queue.find(dsl, swallowing).orElseThrow();
        assertThat(failed.status()).isEqualTo(JobStatus.FAILED);
        assertThat(failed.attempts()).isEqualTo(2);
    }

    @Test
    void aPoolTooSmallForTheThreadsIsRefusedAtStart() {
        try (var small = dev.locksmith.it.support.TestPostgres.pool(database, 3)) {
            TransactionalWorker worker = TransactionalWorker.builder(small, "q", (jobs, tx) -> {})
                    .threads(3)
                    .build();
            org.assertj.core.api.Assertions.assertThatThrownBy(worker::start)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("allows at most 3 connections")
                    .hasMessageContaining("needs 4");
        }
    }
}

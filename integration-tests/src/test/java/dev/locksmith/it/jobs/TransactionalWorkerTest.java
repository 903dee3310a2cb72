package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.DatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Batches claimed and handled in one transaction: all of a batch commits, or none of it. */
class TransactionalWorkerTest extends DatabaseTest {

    private JobQueue queue;

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
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
    void drainsEveryJobExactlyOnceInBatches() {
        List<Long> ids = queue.enqueueAll(dsl, Collections.nCopies(2000, NewJob.of("batch", "noop")));
        try (TransactionalWorker worker = TransactionalWorker.builder(pool, "batch", (jobs, tx) -> {
            for (Job job : jobs) {
                tx.execute("INSERT INTO batch_results VALUES (?)", job.id());
            }
        }).threads(4).batchSize(50).pollInterval(Duration.ofMillis(50)).build().start()) {
            awaitEmptyQueue("batch");
            assertThat(worker.processed()).isEqualTo(2000);
        }
        List<Long> done = dsl.fetchValues("SELECT job_id FROM batch_results").stream()
                .map(v -> ((Number) v).longValue()).toList();
        assertThat(done).hasSize(2000).containsExactlyInAnyOrderElementsOf(ids);
    }

    @Test
    void aFailingBatchRollsBackAndItsJobsStayQueued() {
        queue.enqueueAll(dsl, Collections.nCopies(20, NewJob.of("poison", "k")));
        try (TransactionalWorker worker = TransactionalWorker.builder(pool, "poison", (jobs, tx) -> {
            tx.execute("INSERT INTO batch_results VALUES (?)", jobs.get(0).id());
            throw new IllegalStateException("batch fails");
        }).threads(2).batchSize(5).pollInterval(Duration.ofMillis(20)).listen(false).build().start()) {
            dsl.execute("SELECT pg_sleep(0.3)");   // let it try (and fail) repeatedly
            assertThat(worker.processed()).isZero();
        }
        assertThat(dsl.fetchCount(JOBS, JOBS.QUEUE.eq("poison"))).isEqualTo(20);
        assertThat(dsl.fetchCount(dsl.selectFrom("batch_results"))).isZero();
    }
}

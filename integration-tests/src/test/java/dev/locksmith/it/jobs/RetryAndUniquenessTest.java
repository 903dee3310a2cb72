package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Backoff;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RetryAndUniquenessTest extends DatabaseTest {

    private JobQueue queue;

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        // no jitter, so the delays must strictly grow: 20, 40, 80 ms
        queue = new JobQueue(
                dsl,
                JobQueueConfig.builder()
                        .retryBackoff(new Backoff(Duration.ofMillis(20), Duration.ofSeconds(5), 2.0, 0.0))
                        .build());
    }

    /** Claims the job once it is due, waiting on the database clock for its run_at. */
    private Job claimWhenDue(long id) {
        dsl.execute(
                "SELECT pg_sleep(greatest(0, extract(epoch FROM (run_at - clock_timestamp())) + 0.005)) "
                        + "FROM locksmith.jobs WHERE id = ?",
                id);
        List<Job> jobs = queue.claim("retry", 1, Duration.ofMinutes(1), "w");
        assertThat(jobs).extracting(Job::id).containsExactly(id);
        return jobs.get(0);
    }

    @Test
    void failingJobIsRetriedWithGrowingDelaysThenFailsWithItsLastError() {
        long id = queue.enqueue(dsl, NewJob.builder("retry", "k").maxAttempts(4).build());
        List<Duration> delays = new ArrayList<>();
        for (int attempt = 1; attempt <= 3; attempt++) {
            Job job = claimWhenDue(id);
            assertThat(job.attempts()).isEqualTo(attempt);
            String message = "boom " + attempt;
            FailResult result = dsl.transactionResult(c -> queue.fail(c.dsl(), job, message));
            assertThat(result.outcome()).isEqualTo(FailResult.Outcome.RETRY_SCHEDULED);
            Job pending = queue.find(dsl, id).orElseThrow();
            assertThat(pending.status()).isEqualTo(JobStatus.PENDING);
            delays.add(Duration.between(
                    dsl.fetchValue(JOBS.UPDATED_AT, JOBS.ID.eq(id)),
                    result.retryAt().orElseThrow()));
        }
        Job last = claimWhenDue(id);
        FailResult result = dsl.transactionResult(c -> queue.fail(c.dsl(), last, "boom 4"));

        System.out.printf("retry delays after failures 1..3: %s, then %s%n", delays, result.outcome());
        assertThat(delays).containsExactly(Duration.ofMillis(20), Duration.ofMillis(40), Duration.ofMillis(80));
        assertThat(result.outcome()).isEqualTo(FailResult.Outcome.FAILED);
        Job failed = queue.find(dsl, id).orElseThrow();
        assertThat(failed.status()).isEqualTo(JobStatus.FAILED);
        assertThat(failed.lastError()).isEqualTo("boom 4");
        assertThat(failed.attempts()).isEqualTo(4);
        assertThat(queue.claim("retry", 1, Duration.ofMinutes(1), "w")).isEmpty();
    }

    @Test
    void eightThreadsEnqueueingTheSameUniqueKeyAtOnceMakeExactlyOneJob() throws Exception {
        CyclicBarrier together = new CyclicBarrier(8);
        List<Long> ids = Concurrently.run(
                8,
                60,
                thread -> dsl.transactionResult(c -> {
                    together.await(30, TimeUnit.SECONDS);
                    return queue.enqueue(
                            c.dsl(),
                            NewJob.builder("unique", "k")
                                    .uniqueKey("invoice-42")
                                    .build());
                }));
        assertThat(ids).hasSize(8).containsOnly(ids.get(0));
        assertThat(dsl.fetchCount(JOBS, JOBS.UNIQUE_KEY.eq("invoice-42"))).isEqualTo(1);
    }
}

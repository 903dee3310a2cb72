package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * 8 workers on separate connections drain 10,000 jobs. Every job's work writes a row to a
 * results table in the same transaction as its claim or completion; the results table has no
 * unique constraint, so a job handed to two workers would show up twice.
 */
class ExactlyOnceTest extends DatabaseTest {

    static final int WORKERS = 8;
    static final int JOBS_COUNT = 10_000;

    private JobQueue queue;
    private List<Long> enqueued;

    @BeforeEach
    void tenThousandJobs() {
        dsl.execute("DROP TABLE IF EXISTS job_results");
        dsl.execute("CREATE TABLE job_results (job_id bigint NOT NULL, worker int NOT NULL)");
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(dsl);
        enqueued = new ArrayList<>();
        for (int batch = 0; batch < JOBS_COUNT / 1000; batch++) {
            enqueued.addAll(queue.enqueueAll(dsl, Collections.nCopies(1000, NewJob.of("work", "noop"))));
        }
        assertThat(enqueued).hasSize(JOBS_COUNT).doesNotHaveDuplicates();
    }

    private void recordResult(org.jooq.DSLContext tx, long jobId, int worker) {
        tx.execute("INSERT INTO job_results (job_id, worker) VALUES (?, ?)", jobId, worker);
    }

    private void assertEveryJobExactlyOnce(String mode, List<Integer> perWorker) {
        int duplicates = dsl.fetchOne("SELECT count(*) FROM (SELECT job_id FROM job_results GROUP BY job_id "
                        + "HAVING count(*) > 1) d")
                .get(0, Integer.class);
        int distinct =
                dsl.fetchOne("SELECT count(DISTINCT job_id) FROM job_results").get(0, Integer.class);
        List<Long> processed = dsl.fetchValues("SELECT job_id FROM job_results").stream()
                .map(v -> ((Number) v).longValue())
                .toList();
        System.out.printf(
                "%s: %d jobs, %d workers, processed %d (per worker %s), duplicates %d, lost %d%n",
                mode, JOBS_COUNT, WORKERS, processed.size(), perWorker, duplicates, JOBS_COUNT - distinct);
        assertThat(duplicates).isZero();
        assertThat(processed).hasSize(JOBS_COUNT).containsExactlyInAnyOrderElementsOf(enqueued);
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void transactionalModeProcessesEveryJobExactlyOnce() throws Exception {
        // Every worker's first transaction holds its claimed job until all eight hold one: eight
        // different jobs claimed at once (SKIP LOCKED), so each worker processes at least one on a
        // machine of any speed, rather than if the scheduler happens to run it before the queue is
        // empty.
        CyclicBarrier eachHoldsOne = new CyclicBarrier(WORKERS);
        List<Integer> perWorker = Concurrently.run(WORKERS, 300, worker -> {
            int done = 0;
            boolean first = true;
            while (true) {
                boolean holdUntilAllHoldOne = first;
                first = false;
                int claimed = dsl.transactionResult(c -> {
                    List<Job> jobs = queue.claimInTransaction(c.dsl(), "work", 1);
                    for (Job job : jobs) {
                        recordResult(c.dsl(), job.id(), worker);
                    }
                    if (holdUntilAllHoldOne) {
                        eachHoldsOne.await(60, TimeUnit.SECONDS);
                    }
                    return jobs.size();
                });
                if (claimed == 0) {
                    // nothing rolls back in this test, so an empty claim means the rest is taken
                    return done;
                }
                done += claimed;
            }
        });
        assertEveryJobExactlyOnce("transactional claim", perWorker);
        assertThat(perWorker).allSatisfy(n -> assertThat(n).isPositive());
    }

    @Test
    void leasedModeCompletesEveryJobAndLosesNone() throws Exception {
        dsl.execute("ALTER TABLE job_results ADD PRIMARY KEY (job_id)");
        List<Integer> perWorker = Concurrently.run(WORKERS, 300, worker -> {
            int done = 0;
            while (true) {
                List<Job> jobs = queue.claim("work", 10, Duration.ofMinutes(5), "worker-" + worker);
                if (jobs.isEmpty()) {
                    return done;
                }
                for (Job job : jobs) {
                    dsl.transaction(c -> {
                        // at-least-once delivery, de-duplicated on the job id
                        c.dsl()
                                .execute(
                                        "INSERT INTO job_results (job_id, worker) VALUES (?, ?) "
                                                + "ON CONFLICT (job_id) DO NOTHING",
                                        job.id(),
                                        worker);
                        assertThat(queue.complete(c.dsl(), job)).isTrue();
                    });
                    done++;
                }
            }
        });
        assertEveryJobExactlyOnce("leased claim (batches of 10)", perWorker);
        assertThat(dsl.fetchCount(JOBS, JOBS.STATUS.eq("running"))).isZero();
        assertThat(perWorker.stream().mapToInt(Integer::intValue).sum()).isEqualTo(JOBS_COUNT);
    }
}

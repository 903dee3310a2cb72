package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.jooq.Record2;
import org.junit.jupiter.api.Test;

/**
 * Many threads finishing and retrying at once: every job is, at every commit, in exactly one of
 * jobs and job_history. Claimers fail each even job once (its last attempt: it moves to history as
 * failed) and complete every other attempt (it moves to history as done); two retriers race to put
 * the failed jobs back; a checker reads both tables in one snapshot throughout. A finish that
 * inserted into history and deleted from jobs in two statements, or a retry that copied without
 * deleting under the row's lock, shows up as a job in both tables or a retry counted twice.
 */
class HistoryConcurrencyTest extends DatabaseTest {

    private static final int JOBS_COUNT = 600;
    private static final int CLAIMERS = 4;
    private static final int RETRIERS = 2;

    @Test
    void everyJobIsInExactlyOneTableAndRetriedExactlyOnce() throws Exception {
        JobQueue queue =
                new JobQueue(dsl, JobQueueConfig.builder().keepCompleted(true).build());
        List<Long> ids = queue.enqueueAll(
                dsl,
                IntStream.range(0, JOBS_COUNT)
                        .mapToObj(
                                i -> NewJob.builder("race", "k").maxAttempts(1).build())
                        .toList());
        AtomicInteger retried = new AtomicInteger();
        AtomicInteger failedOnce = new AtomicInteger();
        AtomicBoolean over = new AtomicBoolean();
        List<String> anomalies = java.util.Collections.synchronizedList(new ArrayList<>());
        ExecutorService threads = Executors.newFixedThreadPool(CLAIMERS + RETRIERS + 1);
        List<Future<?>> running = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        for (int i = 0; i < CLAIMERS; i++) {
            running.add(threads.submit(() -> {
                while (!over.get() && System.nanoTime() < deadline) {
                    List<Job> claimed = queue.claim("race", 7, Duration.ofMinutes(5), "claimer");
                    List<Job> toComplete = new ArrayList<>();
                    for (Job job : claimed) {
                        if (job.id() % 2 == 0 && job.attempts() == 1) {
                            dsl.transaction(c -> queue.fail(c.dsl(), job, "first attempt"));
                            failedOnce.incrementAndGet();
                        } else {
                            toComplete.add(job);
                        }
                    }
                    if (!toComplete.isEmpty()) {
                        int done = dsl.transactionResult(c -> queue.completeAll(c.dsl(), toComplete));
                        if (done != toComplete.size()) {
                            anomalies.add("completed " + done + " of " + toComplete.size());
                        }
                    }
                }
                return null;
            }));
        }
        for (int i = 0; i < RETRIERS; i++) {
            running.add(threads.submit(() -> {
                while (!over.get() && System.nanoTime() < deadline) {
                    for (Long id : dsl.select(JOB_HISTORY.ID)
                            .from(JOB_HISTORY)
                            .where(JOB_HISTORY.STATUS.eq("failed"))
                            .limit(20)
                            .fetch(JOB_HISTORY.ID)) {
                        if (queue.retry(dsl, id)) {
                            retried.incrementAndGet();
                        }
                    }
                }
                return null;
            }));
        }
        running.add(threads.submit(() -> {
            while (!over.get() && System.nanoTime() < deadline) {
                Record2<Integer, Integer> seen = dsl.transactionResult(c -> {
                    c.dsl().execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                    return c.dsl()
                            .resultQuery("SELECT count(*)::int, count(DISTINCT id)::int FROM (SELECT id FROM "
                                    + "locksmith.jobs UNION ALL SELECT id FROM locksmith.job_history) t")
                            .coerce(
                                    org.jooq.impl.DSL.field("n", Integer.class),
                                    org.jooq.impl.DSL.field("d", Integer.class))
                            .fetchSingle();
                });
                if (seen.value1() != JOBS_COUNT || seen.value2() != JOBS_COUNT) {
                    anomalies.add("one snapshot saw " + seen.value1() + " rows of " + seen.value2() + " jobs");
                }
                if (dsl.fetchCount(JOB_HISTORY, JOB_HISTORY.STATUS.eq("done")) == JOBS_COUNT) {
                    over.set(true);
                }
            }
            return null;
        }));
        threads.shutdown();
        for (Future<?> f : running) {
            f.get(4, TimeUnit.MINUTES);
        }

        assertThat(anomalies).isEmpty();
        assertThat(dsl.fetchCount(JOBS)).isZero();
        assertThat(dsl.fetchValues(JOB_HISTORY.ID)).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(dsl.fetchCount(JOB_HISTORY, JOB_HISTORY.STATUS.eq("done"))).isEqualTo(JOBS_COUNT);
        long even = ids.stream().filter(id -> id % 2 == 0).count();
        assertThat(failedOnce.get()).isEqualTo(even);
        assertThat(retried.get()).as("each failed job put back exactly once").isEqualTo(even);
    }
}

package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JobWorker.Builder#claimers}: claim statements side by side share the jobs the worker
 * may hold, so that together they never lease more than one claimer would, and every job still
 * runs once.
 */
class ClaimersTest extends DatabaseTest {

    private JobQueue queue;

    @Override
    protected int poolSize() {
        return 24;
    }

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(dsl);
    }

    private void enqueue(String queueName, int count) {
        queue.enqueueAll(dsl, Collections.nCopies(count, NewJob.of(queueName, "k")));
    }

    private int running(String queueName) {
        return dsl.fetchCount(JOBS, JOBS.QUEUE.eq(queueName).and(JOBS.STATUS.eq("running")));
    }

    /**
     * Eight claimers for three threads, handlers held. The eight start together and all look
     * for room at once: the shared reservation lets three jobs through. Then, while the
     * handlers are held, the claimers wake 80 more times and lease nothing more. Claimers that
     * each claimed for the free threads (without counting what the others ask for) would lease
     * up to eight times that; checked by hand with {@code reserve} counting only the jobs
     * already claimed: 9, 8 and 9 jobs were leased in three runs, and the test failed.
     */
    @Test
    void eightClaimersLeaseNoMoreJobsThanThreeThreadsMayHold() throws Exception {
        enqueue("shared", 60);
        CountDownLatch release = new CountDownLatch(1);
        Set<Long> started = ConcurrentHashMap.newKeySet();
        AtomicInteger polls = new AtomicInteger();
        Map<Long, Integer> completed = new ConcurrentHashMap<>();
        WorkerEvents listener = new WorkerEvents() {
            @Override
            public void woke(Wake reason) {
                polls.incrementAndGet();
            }

            @Override
            public void completed(Job job) {
                completed.merge(job.id(), 1, Integer::sum);
            }
        };
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(dsl).observer(listener).build()), "shared", (job, tx) -> {
                            started.add(job.id());
                            release.await();
                        })
                .threads(3)
                .prefetch(0)
                .claimers(8)
                .listen(false)
                .pollInterval(Duration.ofMillis(5))
                .build()
                .start()) {
            Await.until("three handlers started", Duration.ofSeconds(30), () -> started.size() == 3);
            int before = polls.get();
            Await.until(
                    "the claimers looked for room 80 more times",
                    Duration.ofSeconds(30),
                    () -> polls.get() >= before + 80);
            assertThat(running("shared"))
                    .as("jobs leased while three handlers are held")
                    .isEqualTo(3);
            assertThat(started).hasSize(3);
            release.countDown();
            Await.until("all 60 jobs completed", Duration.ofSeconds(60), () -> completed.size() == 60);
        }
        assertThat(completed).allSatisfy((id, times) -> assertThat(times).isOne());
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void fourClaimersRunEveryJobExactlyOnce() throws Exception {
        enqueue("drain", 3000);
        Map<Long, Integer> handled = new ConcurrentHashMap<>();
        Set<Long> lost = ConcurrentHashMap.newKeySet();
        CountDownLatch allCompleted = new CountDownLatch(3000);
        WorkerEvents listener = new WorkerEvents() {
            @Override
            public void completed(Job job) {
                allCompleted.countDown();
            }

            @Override
            public void leaseLost(Job job) {
                lost.add(job.id());
            }
        };
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(dsl).observer(listener).build()),
                        "drain",
                        (job, tx) -> handled.merge(job.id(), 1, Integer::sum))
                .threads(4)
                .prefetch(200)
                .claimers(4)
                .build()
                .start()) {
            assertThat(allCompleted.await(120, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(handled)
                .hasSize(3000)
                .allSatisfy((id, times) -> assertThat(times).isOne());
        assertThat(lost).isEmpty();
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void eachClaimerNeedsAConnectionOfItsOwn() {
        assertThat(JobWorker.connectionsNeeded(4, true, 1)).isEqualTo(JobWorker.connectionsNeeded(4, true));
        assertThat(JobWorker.connectionsNeeded(4, true, 3)).isEqualTo(10);
        assertThat(JobWorker.connectionsNeeded(4, false, 3)).isEqualTo(9);
        assertThatThrownBy(() -> JobWorker.connectionsNeeded(4, true, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("claimers must be between 1 and 8, was 0");
        assertThatThrownBy(() -> JobWorker.builder(dsl, "q", (job, tx) -> {}).claimers(9))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("claimers must be between 1 and 8, was 9");
        try (HikariDataSource small = TestPostgres.pool(database, 9)) {
            JobWorker worker = JobWorker.builder(small, "q", (job, tx) -> {})
                    .threads(4)
                    .claimers(3)
                    .build();
            assertThatThrownBy(worker::start)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("allows at most 9 connections")
                    .hasMessageContaining("worker of 3 claimers with 4 threads")
                    .hasMessageContaining("needs 10");
        }
    }
}

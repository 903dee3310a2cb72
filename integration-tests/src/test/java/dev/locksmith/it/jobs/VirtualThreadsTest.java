package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.Worker;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.LocksmithObserver;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Handlers on virtual threads (Java 21+): a worker asked for a thousand of them on a pool of eight
 * connections runs no more handlers at once than the pool leaves it connections for, so none waits
 * for a connection (the pool's one-second timeout would fail the attempt) and no lease lapses,
 * and every job runs once, on a virtual thread. The same worker on platform threads is refused at
 * start, as it always was; before Java 21, asking for virtual threads fails the build.
 */
class VirtualThreadsTest extends DatabaseTest {

    private static final int JOBS_ENQUEUED = 300;
    private static final int POOL = 8;

    private HikariDataSource small;
    private final Map<Long, Integer> runs = new ConcurrentHashMap<>();
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger mostAtOnce = new AtomicInteger();
    private final AtomicInteger onPlatformThreads = new AtomicInteger();
    private final Map<JobEvent, AtomicInteger> events = new ConcurrentHashMap<>();

    @BeforeEach
    void smallPool() {
        // one instance serves every test of the class (DatabaseTest's lifecycle): start afresh
        runs.clear();
        running.set(0);
        mostAtOnce.set(0);
        onPlatformThreads.set(0);
        events.clear();
        dsl.deleteFrom(JOBS).execute();
        small = TestPostgres.pool(database, POOL);
        small.setConnectionTimeout(1000);
    }

    @AfterEach
    void closePool() {
        small.close();
    }

    private JobQueue observedQueue() {
        return new JobQueue(Locksmith.builder(small)
                .observer(new LocksmithObserver() {
                    @Override
                    public void jobEvent(JobEvent event, Job job) {
                        events.computeIfAbsent(event, e -> new AtomicInteger()).incrementAndGet();
                    }
                })
                .build());
    }

    private void handle(Job job, DSLContext tx) throws InterruptedException {
        int now = running.incrementAndGet();
        mostAtOnce.accumulateAndGet(now, Math::max);
        try {
            if (!Thread.currentThread().getClass().getName().contains("Virtual")) {
                onPlatformThreads.incrementAndGet();
            }
            tx.execute("SELECT 1");
            Thread.sleep(5); // blocking work: a virtual thread unmounts here
            runs.merge(job.id(), 1, Integer::sum);
        } finally {
            running.decrementAndGet();
        }
    }

    private void assertEveryJobRanOnceWithinThePool(int handlersAtMost) {
        assertThat(runs)
                .hasSize(JOBS_ENQUEUED)
                .allSatisfy((id, n) -> assertThat(n).isEqualTo(1));
        assertThat(onPlatformThreads).hasValue(0);
        assertThat(mostAtOnce.get()).isBetween(1, handlersAtMost);
        assertThat(events.getOrDefault(JobEvent.LEASE_LOST, new AtomicInteger()))
                .hasValue(0);
        assertThat(events.getOrDefault(JobEvent.RETRY_SCHEDULED, new AtomicInteger()))
                .hasValue(0);
        assertThat(events.getOrDefault(JobEvent.FAILED, new AtomicInteger())).hasValue(0);
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void aThousandVirtualThreadsOnEightConnectionsRunAsManyHandlersAsThePoolServes() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
        JobQueue queue = observedQueue();
        queue.enqueueAll(dsl, Collections.nCopies(JOBS_ENQUEUED, NewJob.of("virtual", "k")));
        try (Worker worker = JobWorker.builder(queue, "virtual", this::handle)
                .virtualThreads(true)
                .threads(1000)
                .lease(Duration.ofSeconds(3))
                .pollInterval(Duration.ofMillis(50))
                .build()
                .start()) {
            Await.until(
                    "every job completed",
                    Duration.ofMinutes(2),
                    () -> runs.size() == JOBS_ENQUEUED && dsl.fetchCount(JOBS) == 0);
        }
        // eight connections less the claimer's, the completer's, the heartbeat's and LISTEN's
        assertEveryJobRanOnceWithinThePool(POOL - 4);
    }

    @Test
    void aTransactionalWorkerOnVirtualThreadsIsBoundedTheSameWay() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
        JobQueue queue = observedQueue();
        queue.enqueueAll(dsl, Collections.nCopies(JOBS_ENQUEUED, NewJob.of("virtual-tx", "k")));
        try (Worker worker = TransactionalWorker.builder(queue, "virtual-tx", (jobs, tx) -> {
                    for (Job job : jobs) {
                        handle(job, tx);
                    }
                })
                .virtualThreads(true)
                .threads(1000)
                .batchSize(5)
                .pollInterval(Duration.ofMillis(50))
                .build()
                .start()) {
            Await.until(
                    "every job completed",
                    Duration.ofMinutes(2),
                    () -> runs.size() == JOBS_ENQUEUED && dsl.fetchCount(JOBS) == 0);
        }
        // eight connections less LISTEN's
        assertEveryJobRanOnceWithinThePool(POOL - 1);
    }

    @Test
    void onPlatformThreadsTheSameWorkerIsRefusedAndBeforeJava21VirtualThreadsAre() {
        JobQueue queue = observedQueue();
        assertThatThrownBy(() -> JobWorker.builder(queue, "platform", this::handle)
                        .threads(1000)
                        .build()
                        .start())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("allows at most " + POOL + " connections");
        if (Runtime.version().feature() < 21) {
            assertThatThrownBy(() -> JobWorker.builder(queue, "virtual", this::handle)
                            .virtualThreads(true)
                            .build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Java 21");
        }
    }
}

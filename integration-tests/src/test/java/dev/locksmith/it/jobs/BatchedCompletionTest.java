package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultExecuteListenerProvider;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JobWorker} completes the jobs of handlers that wrote nothing in batches, after their
 * transactions, and heartbeats all its leases in one statement; a handler that wrote still
 * completes its job in its own transaction, so that its writes commit only with the completion.
 */
class BatchedCompletionTest extends DatabaseTest {

    private final AtomicInteger completions = new AtomicInteger();
    private DSLContext counted;
    private JobQueue queue;

    @Override
    protected int poolSize() {
        return 16;
    }

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        dsl.execute("DROP TABLE IF EXISTS batched_results");
        dsl.execute("CREATE TABLE batched_results (job_id bigint NOT NULL)");
        completions.set(0);
        ExecuteListener counter = new ExecuteListener() {
            private static final long serialVersionUID = 1L;

            @Override
            public void executeStart(ExecuteContext ctx) {
                String sql = String.valueOf(ctx.sql()).toLowerCase(java.util.Locale.ROOT);
                if (sql.startsWith("delete from") && sql.contains("lease_id")) {
                    completions.incrementAndGet();
                }
            }
        };
        counted = DSL.using(dsl.configuration().derive(new DefaultExecuteListenerProvider(counter)));
        queue = new JobQueue(dsl);
    }

    /** Completions and lost leases, by job id. */
    private static final class Outcomes extends WorkerEvents {
        final Map<Long, Integer> completed = new ConcurrentHashMap<>();
        final Set<Long> lost = ConcurrentHashMap.newKeySet();
        final CountDownLatch allCompleted;
        final CountDownLatch oneLost = new CountDownLatch(1);

        Outcomes(int expected) {
            allCompleted = new CountDownLatch(expected);
        }

        @Override
        public void completed(Job job) {
            completed.merge(job.id(), 1, Integer::sum);
            allCompleted.countDown();
        }

        @Override
        public void leaseLost(Job job) {
            lost.add(job.id());
            oneLost.countDown();
        }
    }

    private void enqueue(String queueName, int count) {
        queue.enqueueAll(dsl, Collections.nCopies(count, NewJob.of(queueName, "k")));
    }

    @Test
    void handlersThatWriteNothingHaveTheirJobsCompletedInBatches() throws Exception {
        enqueue("batched", 400);
        Outcomes outcomes = new Outcomes(400);
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(
                                Locksmith.builder(counted).observer(outcomes).build()),
                        "batched",
                        (job, tx) -> {})
                .threads(8)
                .completionLinger(Duration.ofMillis(20))
                .build()
                .start()) {
            assertThat(outcomes.allCompleted.await(60, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(dsl.fetchCount(JOBS)).isZero();
        assertThat(outcomes.completed)
                .hasSize(400)
                .allSatisfy((id, times) -> assertThat(times).isOne());
        // one statement per job would be 400
        assertThat(completions.get()).as("completion statements for 400 jobs").isLessThan(200);
    }

    @Test
    void aHandlerThatWritesCompletesInItsOwnTransactionAndLosesItsWritesWithItsLease() throws Exception {
        enqueue("writes", 3);
        long stolen = dsl.select(DSL.min(JOBS.ID)).from(JOBS).fetchSingle().value1();
        Outcomes outcomes = new Outcomes(2);
        JobHandler handler = (job, tx) -> {
            tx.execute("INSERT INTO batched_results VALUES (?)", job.id());
            if (job.id() == stolen) {
                // another worker rescued and re-claimed it meanwhile (a new lease on the row)
                dsl.execute("UPDATE locksmith.jobs SET lease_id = gen_random_uuid() WHERE id = ?", job.id());
            }
        };
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(
                                Locksmith.builder(counted).observer(outcomes).build()),
                        "writes",
                        handler)
                .threads(2)
                .completionLinger(Duration.ofSeconds(1))
                .build()
                .start()) {
            assertThat(outcomes.allCompleted.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(outcomes.oneLost.await(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(outcomes.lost).containsExactly(stolen);
        // the stolen job's insert rolled back with its failed completion; the others committed with theirs
        List<Long> written = dsl.fetch("SELECT job_id FROM batched_results").getValues(0, Long.class);
        assertThat(written).hasSize(2).doesNotContain(stolen);
        assertThat(dsl.fetchValues(DSL.select(JOBS.ID).from(JOBS))).containsExactly(stolen);
        assertThat(completions.get()).as("one completion per writing job").isEqualTo(3);
    }

    @Test
    void aLeaseLostWhileItsCompletionWaitsIsReportedAndTheJobIsLeftToItsNewHolder() throws Exception {
        enqueue("lingering", 1);
        CountDownLatch handled = new CountDownLatch(1);
        Outcomes outcomes = new Outcomes(1);
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(
                                Locksmith.builder(counted).observer(outcomes).build()),
                        "lingering",
                        (job, tx) -> handled.countDown())
                .threads(4)
                // a batch of one waits this long for three more: time to take the lease away
                .completionLinger(Duration.ofSeconds(1))
                .build()
                .start()) {
            assertThat(handled.await(30, TimeUnit.SECONDS)).isTrue();
            dsl.execute("UPDATE locksmith.jobs SET lease_id = gen_random_uuid(), locked_by = 'other'");
            assertThat(outcomes.oneLost.await(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(outcomes.completed).isEmpty();
        assertThat(dsl.fetchValue(DSL.select(JOBS.LOCKED_BY).from(JOBS))).isEqualTo("other");
    }

    @Test
    void oneHeartbeatStatementExtendsEveryHeldLease() throws Exception {
        enqueue("heartbeat", 4);
        CountDownLatch started = new CountDownLatch(4);
        CountDownLatch release = new CountDownLatch(1);
        Outcomes outcomes = new Outcomes(4);
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool).observer(outcomes).build()), "heartbeat", (job, tx) -> {
                            started.countDown();
                            release.await();
                        })
                .threads(4)
                .lease(Duration.ofMillis(900))
                .build()
                .start()) {
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            Map<Long, OffsetDateTime> claimed = leases();
            AtomicReference<Map<Long, OffsetDateTime>> latest = new AtomicReference<>(claimed);
            Await.until("all four leases extended", Duration.ofSeconds(30), () -> {
                latest.set(leases());
                return changed(claimed, latest.get()) == 4;
            });
            Map<Long, OffsetDateTime> extended = latest.get();
            assertThat(changed(claimed, extended)).as("leases extended").isEqualTo(4);
            // now() is the statement's transaction's: one statement gives every row the same end,
            // one statement per lease would give each its own
            assertThat(Set.copyOf(extended.values())).hasSize(1);
            release.countDown();
            assertThat(outcomes.allCompleted.await(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    private Map<Long, OffsetDateTime> leases() {
        return dsl.select(JOBS.ID, JOBS.LOCKED_UNTIL).from(JOBS).fetchMap(JOBS.ID, JOBS.LOCKED_UNTIL);
    }

    private static long changed(Map<Long, OffsetDateTime> before, Map<Long, OffsetDateTime> after) {
        return before.keySet().stream()
                .filter(id -> after.get(id) != null && !after.get(id).equals(before.get(id)))
                .count();
    }

    /** Enqueues {@code quick} jobs of kind "quick" due first, then {@code blocking} of kind "block". */
    private void enqueueQuickThenBlocking(String queueName, int quick, int blocking) {
        queue.enqueueAll(
                dsl,
                Collections.nCopies(
                        quick, NewJob.builder(queueName, "quick").priority(0).build()));
        queue.enqueueAll(
                dsl,
                Collections.nCopies(
                        blocking, NewJob.builder(queueName, "block").priority(1).build()));
    }

    /** Counts the claimer's wake-ups: a claimer that woke n more times looked for room n times. */
    private static final class Wakes extends WorkerEvents {
        private final AtomicInteger count = new AtomicInteger();

        @Override
        public void woke(Wake reason) {
            count.incrementAndGet();
        }

        /** Returns once the claimer has woken {@code times} more times (instead of sleeping). */
        void lookedAgain(int times) throws InterruptedException {
            int before = count.get();
            Await.until(
                    "the claimer woke " + times + " more times",
                    Duration.ofSeconds(30),
                    () -> count.get() >= before + times);
        }
    }

    private int running(String queueName) {
        return dsl.fetchCount(JOBS, JOBS.QUEUE.eq(queueName).and(JOBS.STATUS.eq("running")));
    }

    @Test
    void aWorkerWithShortJobsClaimsAheadAndGivesBackWhatItHadNotStartedWhenClosed() throws Exception {
        enqueueQuickThenBlocking("ahead", 20, 12);
        CountDownLatch never = new CountDownLatch(1);
        Wakes wakes = new Wakes();
        JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool).observer(wakes).build()), "ahead", (job, tx) -> {
                            if (job.kind().equals("block")) {
                                never.await();
                            }
                        })
                .threads(2)
                .prefetch(6)
                .shutdownGrace(Duration.ofMillis(200))
                .pollInterval(Duration.ofMillis(5))
                .build()
                .start();
        try {
            // the quick jobs set a short average run: two threads blocked, more claimed ahead
            // (claims wait while half of the six ahead have not started: at least three)
            Await.until("five jobs running", Duration.ofSeconds(30), () -> running("ahead") >= 5);
            wakes.lookedAgain(40);
            assertThat(running("ahead"))
                    .as("threads + claimed ahead, at most threads + prefetch")
                    .isBetween(5, 8);
        } finally {
            worker.close();
        }
        // the blocked handlers were interrupted and their jobs given back, as were those claimed ahead
        assertThat(dsl.fetchCount(JOBS, JOBS.QUEUE.eq("ahead"))).isEqualTo(12);
        assertThat(dsl.fetchValues(DSL.selectDistinct(JOBS.STATUS).from(JOBS).where(JOBS.QUEUE.eq("ahead"))))
                .containsExactly("pending");
        assertThat(dsl.fetchValues(DSL.selectDistinct(JOBS.ATTEMPTS).from(JOBS).where(JOBS.QUEUE.eq("ahead"))))
                .containsExactly(0);
    }

    @Test
    void noJobIsClaimedAheadBeforeARunHasEndedOrWithPrefetchZero() throws Exception {
        for (boolean quickFirst : new boolean[] {false, true}) {
            String name = quickFirst ? "strict" : "unknown";
            enqueueQuickThenBlocking(name, quickFirst ? 20 : 0, 8);
            CountDownLatch release = new CountDownLatch(1);
            Wakes wakes = new Wakes();
            JobWorker.Builder builder = JobWorker.builder(
                            new JobQueue(Locksmith.builder(pool).observer(wakes).build()), name, (job, tx) -> {
                                if (job.kind().equals("block")) {
                                    release.await();
                                }
                            })
                    .threads(2)
                    .pollInterval(Duration.ofMillis(5));
            // no run has ended yet (nothing known of their length), or claiming ahead is off
            try (JobWorker worker =
                    (quickFirst ? builder.prefetch(0) : builder).build().start()) {
                Await.until("two jobs running", Duration.ofSeconds(30), () -> running(name) >= 2);
                wakes.lookedAgain(40);
                assertThat(running(name)).as(name).isEqualTo(2);
                release.countDown();
            }
        }
    }

    @Test
    void thePrefetchIsValidated() {
        JobWorker.Builder builder = JobWorker.builder(pool, "q", (job, tx) -> {});
        assertThatThrownBy(() -> builder.prefetch(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prefetch");
        assertThatThrownBy(() -> builder.prefetch(1001))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prefetch");
    }

    @Test
    void theLingerIsValidated() {
        JobWorker.Builder builder = JobWorker.builder(pool, "q", (job, tx) -> {});
        assertThatThrownBy(() -> builder.completionLinger(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("completionLinger");
        assertThatThrownBy(() -> builder.completionLinger(Duration.ofSeconds(2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("completionLinger");
    }
}

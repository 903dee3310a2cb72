package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;
import static dev.locksmith.codegen.Tables.JOB_KEY_STARTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.RateLimits;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.Worker;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Rate limits per key (starts per sliding window), on real connections. With a window longer
 * than the test, 20 keys of rates 1 to 5 worked by four {@code JobWorker}s and a
 * {@code TransactionalWorker} at once start exactly their rate of jobs, however long the workers go
 * on claiming, and the rest stay pending with no attempt counted; a check of the count without the
 * lock lets two claims of a key of rate 1 both start a job. A short window slides: the third job of
 * a key of 2 per second starts a second after the first. Rates and concurrency limits together,
 * rolled-back starts, reading and removing, and bad input have tests of their own.
 */
class RateLimitsTest extends DatabaseTest {

    static final String QUEUE = "rated";
    static final int KEYS = 20;
    static final int PER_KEY = 25;

    private JobQueue queue;
    private RateLimits rates;

    @Override
    protected int poolSize() {
        return 30;
    }

    /** Key {@code k3} may start 1 + 3 % 5 = 4 jobs an hour, and so on: rates 1 to 5. */
    static int rateOf(int key) {
        return 1 + key % 5;
    }

    @BeforeEach
    void empty() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
        dsl.deleteFrom(JOB_KEY_STARTS).execute();
        queue = new JobQueue(dsl);
        rates = queue.rateLimits();
    }

    private void enqueue(String key, int count) {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            jobs.add(NewJob.builder(QUEUE, "call").concurrencyKey(key).build());
        }
        queue.enqueueAll(dsl, jobs);
    }

    @Test
    void noKeyStartsMoreJobsInAWindowThanItsRateAcrossWorkersAndModes() throws Exception {
        int allowed = 0;
        for (int k = 0; k < KEYS; k++) {
            enqueue("k" + k, PER_KEY);
            rates.set(dsl, QUEUE, "k" + k, rateOf(k), Duration.ofHours(1));
            allowed += rateOf(k);
        }
        Map<String, AtomicInteger> started = runUntilTheRatesAreUsedUp(allowed);
        for (int k = 0; k < KEYS; k++) {
            assertStartedAndHeldBack(started, "k" + k, rateOf(k), PER_KEY);
        }
    }

    @Test
    void oneKeyClaimedByEveryWorkerAtOnceStartsNoMoreThanItsRate() throws Exception {
        // every claim of every thread reaches the same key: the claims' counts of its starts race
        enqueue("hot", 300);
        rates.setDefault(dsl, QUEUE, 60, Duration.ofHours(1));
        Map<String, AtomicInteger> started = runUntilTheRatesAreUsedUp(60);
        assertStartedAndHeldBack(started, "hot", 60, 300);
    }

    private void assertStartedAndHeldBack(Map<String, AtomicInteger> started, String key, int rate, int enqueued) {
        assertThat(started.get(key)).as("jobs of " + key + " started").hasValue(rate);
        assertThat(dsl.fetchCount(JOBS, JOBS.CONCURRENCY_KEY.eq(key).and(JOBS.STATUS.eq("pending"))))
                .as("jobs of " + key + " held back")
                .isEqualTo(enqueued - rate);
        assertThat(dsl.select(DSL.sum(JOBS.ATTEMPTS))
                        .from(JOBS)
                        .where(JOBS.CONCURRENCY_KEY.eq(key))
                        .fetchOne(0, Integer.class))
                .as("attempts of the held-back jobs of " + key)
                .isZero();
    }

    /**
     * Four {@code JobWorker}s of 2 threads and a {@code TransactionalWorker} of 2 (batches of 5),
     * run until {@code allowed} jobs were handled and then until each {@code JobWorker}'s claims
     * came back empty ten more times; the jobs started, by key.
     */
    private Map<String, AtomicInteger> runUntilTheRatesAreUsedUp(int allowed) throws InterruptedException {
        Map<String, AtomicInteger> started = new ConcurrentHashMap<>();
        CountDownLatch handled = new CountDownLatch(allowed);
        List<CountDownLatch> emptyClaims = new ArrayList<>();
        List<Worker> workers = new ArrayList<>();
        try {
            for (int w = 0; w < 4; w++) {
                CountDownLatch empty = new CountDownLatch(10);
                emptyClaims.add(empty);
                workers.add(JobWorker.builder(
                                new JobQueue(Locksmith.builder(pool)
                                        .observer(new WorkerEvents() {
                                            @Override
                                            public void idle() {
                                                if (handled.getCount() == 0) {
                                                    empty.countDown();
                                                }
                                            }
                                        })
                                        .build()),
                                QUEUE,
                                (job, tx) -> {
                                    started.computeIfAbsent(job.concurrencyKey(), k -> new AtomicInteger())
                                            .incrementAndGet();
                                    handled.countDown();
                                })
                        .threads(2)
                        .pollInterval(Duration.ofMillis(20))
                        .build()
                        .start());
            }
            workers.add(TransactionalWorker.builder(pool, QUEUE, (jobs, tx) -> {
                        for (Job job : jobs) {
                            started.computeIfAbsent(job.concurrencyKey(), k -> new AtomicInteger())
                                    .incrementAndGet();
                            handled.countDown();
                        }
                    })
                    .threads(2)
                    .batchSize(5)
                    .pollInterval(Duration.ofMillis(20))
                    .build()
                    .start());
            assertThat(handled.await(120, TimeUnit.SECONDS)).isTrue();
            for (CountDownLatch empty : emptyClaims) {
                assertThat(empty.await(120, TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            workers.forEach(Worker::close);
        }
        return started;
    }

    @Test
    void aCountOfStartsWithoutTheKeysLockLetsTwoClaimsOfARateOfOneBothStart() throws Exception {
        enqueue("partner", 5);
        // the naive rate limit, in two transactions on two connections at once: count the key's
        // starts in a table of starts, claim a job if below the rate of 1, record its start. Both
        // count before either records (a barrier holds them there), so both claim.
        dsl.execute("CREATE TABLE naive_starts (at timestamptz NOT NULL)");
        try {
            CyclicBarrier counted = new CyclicBarrier(2);
            List<CompletableFuture<Boolean>> claimers = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                claimers.add(CompletableFuture.supplyAsync(() -> dsl.transactionResult(c -> {
                    DSLContext tx = c.dsl();
                    long starts = tx.fetchSingle(
                                    "SELECT count(*) FROM naive_starts WHERE at > clock_timestamp() - interval '1 hour'")
                            .get(0, Long.class);
                    counted.await(60, TimeUnit.SECONDS);
                    if (starts >= 1) {
                        return false;
                    }
                    int taken = tx.update(JOBS)
                            .set(JOBS.STATUS, "running")
                            .set(JOBS.LOCKED_BY, "naive")
                            .set(JOBS.LOCKED_UNTIL, OffsetDateTime.now().plusMinutes(5))
                            .set(JOBS.LEASE_ID, java.util.UUID.randomUUID())
                            .set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.plus(1))
                            .where(JOBS.ID.eq(DSL.field(DSL.select(JOBS.ID)
                                    .from(JOBS)
                                    .where(JOBS.QUEUE.eq(QUEUE))
                                    .and(JOBS.STATUS.eq("pending"))
                                    .orderBy(JOBS.ID)
                                    .limit(1)
                                    .forUpdate()
                                    .skipLocked())))
                            .execute();
                    tx.execute("INSERT INTO naive_starts VALUES (clock_timestamp())");
                    return taken == 1;
                })));
            }
            for (CompletableFuture<Boolean> claimer : claimers) {
                assertThat(claimer.get(60, TimeUnit.SECONDS))
                        .as("a naive claimer started a job")
                        .isTrue();
            }
            assertThat(dsl.fetchCount(JOBS, JOBS.STATUS.eq("running")))
                    .as("jobs of a key of rate 1 started within the hour")
                    .isEqualTo(2);
        } finally {
            dsl.execute("DROP TABLE naive_starts");
        }
        dsl.deleteFrom(JOBS).where(JOBS.STATUS.eq("running")).execute();

        // the library's: a second claim, on another connection while the first claim's transaction
        // is open, skips the key (its rate lock is held); after the first commits, the window is
        // full. A claim that counted without the lock would count none (the first's start is not
        // committed) and start a second job: held up on the first's row of starts until it commits,
        // which is why the second claim's answer is read only after the first commits.
        rates.set(dsl, QUEUE, "partner", 1, Duration.ofHours(1));
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch commit = new CountDownLatch(1);
        Thread first = new Thread(() -> dsl.transaction(c -> {
            if (queue.claimInTransaction(c.dsl(), QUEUE, 5).size() == 1) {
                claimed.countDown();
            }
            commit.await(60, TimeUnit.SECONDS);
        }));
        first.start();
        CompletableFuture<List<Job>> second;
        try {
            assertThat(awaitQuietly(claimed)).as("the first claim took one job").isTrue();
            second = CompletableFuture.supplyAsync(() -> queue.claim(QUEUE, 5, Duration.ofMinutes(1), "second"));
            try {
                second.get(5, TimeUnit.SECONDS);
            } catch (TimeoutException stillClaiming) {
                // answered below, after the first claim commits
            }
        } finally {
            commit.countDown();
        }
        join(first);
        assertThat(second.get(60, TimeUnit.SECONDS))
                .as("the second claim, beside the first")
                .isEmpty();
        assertThat(queue.claim(QUEUE, 5, Duration.ofMinutes(1), "third"))
                .as("after it")
                .isEmpty();
        assertThat(dsl.fetchCount(JOBS, JOBS.STATUS.eq("pending"))).isEqualTo(2);
    }

    @Test
    void aShortWindowSlides() {
        enqueue("partner", 8);
        Duration window = Duration.ofSeconds(1);
        rates.set(dsl, QUEUE, "partner", 2, window);
        // each claim's start lies between the server's clock read before it and after it
        List<OffsetDateTime[]> starts = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (starts.size() < 8 && System.nanoTime() < deadline) {
            OffsetDateTime before = now();
            List<Job> jobs = queue.claim(QUEUE, 8, Duration.ofMinutes(1), "w");
            OffsetDateTime after = now();
            assertThat(jobs.size()).isLessThanOrEqualTo(2);
            jobs.forEach(job -> starts.add(new OffsetDateTime[] {before, after}));
            if (jobs.isEmpty()) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
        }
        assertThat(starts).hasSize(8);
        // the third start after any start is a window later: even from the latest the first could
        // have been to the earliest the third could have been, not less than the window apart
        for (int i = 0; i + 2 < starts.size(); i++) {
            Duration apart = Duration.between(starts.get(i)[0], starts.get(i + 2)[1]);
            assertThat(apart).as("starts %d and %d", i, i + 2).isGreaterThanOrEqualTo(window);
        }
    }

    private OffsetDateTime now() {
        return dsl.select(DSL.field("clock_timestamp()", OffsetDateTime.class)).fetchSingle(0, OffsetDateTime.class);
    }

    @Test
    void aKeyWithARateAndAConcurrencyLimitObeysBoth() {
        enqueue("partner", 5);
        queue.concurrencyLimits().set(dsl, QUEUE, "partner", 1);
        rates.set(dsl, QUEUE, "partner", 3, Duration.ofHours(1));
        for (int i = 0; i < 3; i++) {
            List<Job> jobs = queue.claim(QUEUE, 5, Duration.ofMinutes(1), "w");
            assertThat(jobs).as("claim %d: one at a time", i).hasSize(1);
            assertThat(queue.claim(QUEUE, 5, Duration.ofMinutes(1), "w")).isEmpty();
            Boolean completed = dsl.transactionResult(c -> queue.complete(c.dsl(), jobs.get(0)));
            assertThat(completed).isTrue();
        }
        // three started within the hour: the fourth waits though the key runs none
        assertThat(queue.claim(QUEUE, 5, Duration.ofMinutes(1), "w")).isEmpty();
        assertThat(dsl.fetchCount(JOBS, JOBS.STATUS.eq("pending"))).isEqualTo(2);
    }

    @Test
    void aRateSetBesideAQueueThatLookedBeforeItHoldsTheKeyBackThere() {
        // this queue looks once a second whether its queue has rates; its look, taken now, says no
        enqueue("partner", 4);
        queue.concurrencyLimits().setDefault(dsl, QUEUE, 10);
        assertThat(queue.claim(QUEUE, 1, Duration.ofMinutes(1), "w")).hasSize(1);
        // another JVM (another JobQueue) sets a rate of one start an hour on the key
        new JobQueue(dsl).rateLimits().set(dsl, QUEUE, "partner", 1, Duration.ofHours(1));
        // however old this queue's look, no more than the rate starts: while the look says no
        // rates, the claim leaves the key alone; once it looks again, the key starts one job
        int started = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (started == 0 && System.nanoTime() < deadline) {
            started += queue.claim(QUEUE, 5, Duration.ofMinutes(1), "w").size();
            if (started == 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
        }
        assertThat(started).isEqualTo(1);
        assertThat(queue.claim(QUEUE, 5, Duration.ofMinutes(1), "w")).isEmpty();
        assertThat(dsl.fetchCount(JOBS, JOBS.STATUS.eq("pending"))).isEqualTo(2);
    }

    @Test
    void aDefaultRateCountsEachKeyApart() {
        enqueue("a", 3);
        enqueue("b", 3);
        rates.setDefault(dsl, QUEUE, 2, Duration.ofHours(1));
        rates.set(dsl, QUEUE, "b", 1, Duration.ofHours(1));
        List<Job> jobs = queue.claim(QUEUE, 10, Duration.ofMinutes(1), "w");
        assertThat(jobs).extracting(Job::concurrencyKey).containsExactlyInAnyOrder("a", "a", "b");
        assertThat(queue.claim(QUEUE, 10, Duration.ofMinutes(1), "w")).isEmpty();
        // both windows full: the keys hold back their other jobs (a: 1, b: 2), which the gauges show
        assertThat(queue.concurrencyLimits().heldBack(QUEUE, 100)).isEqualTo(new ConcurrencyLimits.HeldBack(2, 3, 100));
        rates.set(dsl, QUEUE, "a", 5, Duration.ofHours(1));
        assertThat(queue.concurrencyLimits().heldBack(QUEUE, 100)).isEqualTo(new ConcurrencyLimits.HeldBack(1, 2, 100));
    }

    @Test
    void aRolledBackClaimsStartsDoNotCount() {
        enqueue("partner", 2);
        rates.set(dsl, QUEUE, "partner", 1, Duration.ofHours(1));
        assertThatThrownBy(() -> dsl.transaction(c -> {
                    assertThat(queue.claimInTransaction(c.dsl(), QUEUE, 5)).hasSize(1);
                    throw new IllegalStateException("handler failed");
                }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("handler failed");
        assertThat(queue.claim(QUEUE, 5, Duration.ofMinutes(1), "w")).hasSize(1);
        assertThat(queue.claim(QUEUE, 5, Duration.ofMinutes(1), "w")).isEmpty();
    }

    @Test
    void ratesAreReadAndRemovedApartFromConcurrencyLimits() {
        ConcurrencyLimits limits = queue.concurrencyLimits();
        rates.setDefault(dsl, QUEUE, 100, Duration.ofMinutes(1));
        rates.set(dsl, QUEUE, "slow", 5, Duration.ofSeconds(1));
        limits.set(dsl, QUEUE, "slow", 2);
        RateLimits.QueueRates read = rates.of(dsl, QUEUE);
        assertThat(read.defaultPerKey()).contains(new RateLimits.Rate(100, Duration.ofMinutes(1)));
        assertThat(read.rateOf("slow")).contains(new RateLimits.Rate(5, Duration.ofSeconds(1)));
        assertThat(read.rateOf("other")).contains(new RateLimits.Rate(100, Duration.ofMinutes(1)));
        assertThat(limits.of(dsl, QUEUE).keys()).containsExactly(Map.entry("slow", 2));

        assertThat(rates.remove(dsl, QUEUE, "slow")).isTrue();
        assertThat(rates.remove(dsl, QUEUE, "slow")).isFalse();
        assertThat(limits.of(dsl, QUEUE).limitOf("slow")).hasValue(2);
        assertThat(rates.of(dsl, QUEUE).rateOf("slow")).contains(new RateLimits.Rate(100, Duration.ofMinutes(1)));
        assertThat(limits.remove(dsl, QUEUE, "slow")).isTrue();
        assertThat(rates.removeDefault(dsl, QUEUE)).isTrue();
        assertThat(rates.of(dsl, QUEUE).defaultPerKey()).isEqualTo(Optional.empty());
        assertThat(dsl.fetchCount(JOB_CONCURRENCY_LIMITS)).isZero();
    }

    @Test
    void badRatesAreRefusedAndNothingIsWritten() {
        assertThatThrownBy(() -> rates.setDefault(dsl, QUEUE, 0, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxStarts");
        assertThatThrownBy(() -> rates.set(dsl, QUEUE, "k", RateLimits.MAX_STARTS + 1, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        for (Duration bad : List.of(
                Duration.ZERO,
                Duration.ofSeconds(-1),
                Duration.ofDays(2),
                Duration.ofNanos(1_000_500),
                Duration.ofNanos(999_000))) {
            assertThatThrownBy(() -> rates.set(dsl, QUEUE, "k", 1, bad))
                    .as(bad.toString())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("per");
        }
        assertThatThrownBy(() -> rates.set(dsl, QUEUE, " ", 1, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> rates.set(dsl, "", "k", 1, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(dsl.fetchCount(JOB_CONCURRENCY_LIMITS)).isZero();
        // the limits' bounds are the table's too
        // and every window reads back as written, to the microsecond
        for (Duration window : List.of(
                Duration.ofMillis(1),
                Duration.ofNanos(1_500_000),
                Duration.ofMillis(1001),
                Duration.ofNanos(2_345_678_000L),
                Duration.ofMinutes(1),
                Duration.ofDays(1))) {
            rates.set(dsl, QUEUE, "k", RateLimits.MAX_STARTS, window);
            assertThat(rates.of(dsl, QUEUE).rateOf("k"))
                    .as(window.toString())
                    .contains(new RateLimits.Rate(RateLimits.MAX_STARTS, window));
        }
    }

    private static boolean awaitQuietly(CountDownLatch latch) {
        try {
            return latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void join(Thread thread) {
        try {
            thread.join(60_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(thread.isAlive()).isFalse();
    }
}

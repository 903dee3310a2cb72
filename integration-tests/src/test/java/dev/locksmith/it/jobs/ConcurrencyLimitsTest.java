package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;
import org.jooq.DSLContext;
import org.jooq.TransactionalRunnable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Concurrency limits per key, on real connections: 20 keys with limits 1 to 5, 25 jobs each,
 * worked by 8 threads in each worker mode and in both at once, while a recorder counts per key
 * the handlers running at every instant: the most ever running never exceeds the key's limit,
 * and every job runs once. The same workload with the limits removed exceeds them (so the
 * recorder catches what it is for), and a claim that checks the count after claiming runs two
 * jobs of a key of limit 1 at once before giving one back. Fairness, lapsed leases, a lowered
 * limit, bad input and isolation each have a test of their own.
 */
public class ConcurrencyLimitsTest extends DatabaseTest {

    static final String QUEUE = "limited";
    static final int KEYS = 20;
    static final int PER_KEY = 25;
    static final int JOBS_COUNT = KEYS * PER_KEY;

    private JobQueue queue;
    private ConcurrencyLimits limits;
    private Recorder recorder;

    @Override
    protected int poolSize() {
        return 40;
    }

    /** Key {@code k3} has limit 1 + 3 % 5 = 4, and so on: limits 1 to 5. */
    public static int limitOf(int key) {
        return 1 + key % 5;
    }

    /** Handlers running per key, now and at most. */
    public static final class Recorder {
        final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> most = new ConcurrentHashMap<>();
        final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();

        public void run(DSLContext tx, Job job) {
            started(job);
            try {
                // the handler's work: a few milliseconds on the job's own connection, so that the
                // runs of a key overlap when nothing holds them apart
                tx.execute("SELECT pg_sleep(0.003)");
            } finally {
                ended(job);
            }
        }

        /** A run of {@code job} starts. */
        public void started(Job job) {
            String key = job.concurrencyKey();
            int now = running.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            most.computeIfAbsent(key, k -> new AtomicInteger()).accumulateAndGet(now, Math::max);
            runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
        }

        /** The run of {@code job} that {@link #started} began ends. */
        public void ended(Job job) {
            running.get(job.concurrencyKey()).decrementAndGet();
        }

        /**
         * No key {@code k0} to {@code k<keys - 1>} ran more jobs at once than {@code limitOf} it,
         * each ran some, some key ran two at once (the limits held concurrency down, not out), and
         * each of {@code jobs} jobs ran once.
         */
        public void assertWithinLimitsEachRanOnce(int keys, IntUnaryOperator limitOf, int jobs) {
            for (int k = 0; k < keys; k++) {
                assertThat(most("k" + k)).as("most running of k" + k).isBetween(1, limitOf.applyAsInt(k));
            }
            assertThat(most.values().stream().mapToInt(AtomicInteger::get).max().orElse(0))
                    .isGreaterThan(1);
            assertThat(runs.size()).isEqualTo(jobs);
            assertThat(runs.values().stream().filter(n -> n.get() != 1).count())
                    .as("jobs run more than once")
                    .isZero();
        }

        public int most(String key) {
            AtomicInteger m = most.get(key);
            return m == null ? 0 : m.get();
        }
    }

    @BeforeEach
    void keyedJobsAndTheirLimits() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
        queue = new JobQueue(dsl);
        limits = queue.concurrencyLimits();
        recorder = new Recorder();
        enqueueKeyed(queue, dsl, QUEUE, KEYS, PER_KEY, ConcurrencyLimitsTest::limitOf);
    }

    /**
     * {@code perKey} jobs of each key {@code k0} to {@code k<keys - 1>} of {@code queueName},
     * enqueued round robin, and each key's limit.
     */
    public static void enqueueKeyed(
            JobQueue queue, DSLContext dsl, String queueName, int keys, int perKey, IntUnaryOperator limitOf) {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < perKey; i++) {
            for (int k = 0; k < keys; k++) {
                jobs.add(NewJob.builder(queueName, "work")
                        .concurrencyKey("k" + k)
                        .build());
            }
        }
        queue.enqueueAll(dsl, jobs);
        for (int k = 0; k < keys; k++) {
            queue.concurrencyLimits().set(dsl, queueName, "k" + k, limitOf.applyAsInt(k));
        }
    }

    private void assertNoKeyExceededItsLimitAndEveryJobRanOnce() {
        recorder.assertWithinLimitsEachRanOnce(KEYS, ConcurrencyLimitsTest::limitOf, JOBS_COUNT);
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    private JobWorker jobWorker(WorkerEvents events) {
        return JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool).observer(events).build()),
                        QUEUE,
                        (job, tx) -> recorder.run(tx, job))
                .threads(2)
                .pollInterval(Duration.ofMillis(20))
                .build();
    }

    private TransactionalWorker transactionalWorker(int threads, CountDownLatch handled) {
        return TransactionalWorker.builder(pool, QUEUE, (jobs, tx) -> {
                    for (Job job : jobs) {
                        recorder.run(tx, job);
                        handled.countDown();
                    }
                })
                .threads(threads)
                .batchSize(5)
                .pollInterval(Duration.ofMillis(20))
                .build();
    }

    /** Four {@code JobWorker}s of 2 threads each, run until every job was completed. */
    private void runFourJobWorkersUntilEveryJobIsDone() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(JOBS_COUNT);
        runUntil(
                done,
                jobWorker(counting(done)),
                jobWorker(counting(done)),
                jobWorker(counting(done)),
                jobWorker(counting(done)));
    }

    /** Starts the workers, waits until {@code done} reaches zero (at most 180 s), and closes them. */
    public static void runUntil(CountDownLatch done, Worker... workers) throws InterruptedException {
        List<Worker> started = new ArrayList<>();
        try {
            for (Worker worker : workers) {
                started.add(worker.start());
            }
            assertThat(done.await(180, TimeUnit.SECONDS)).isTrue();
        } finally {
            started.forEach(Worker::close);
        }
    }

    private static WorkerEvents counting(CountDownLatch done) {
        return new WorkerEvents() {
            @Override
            public void completed(Job job) {
                done.countDown();
            }
        };
    }

    @Test
    void jobWorkersNeverRunMoreJobsOfAKeyThanItsLimit() throws Exception {
        runFourJobWorkersUntilEveryJobIsDone();
        assertNoKeyExceededItsLimitAndEveryJobRanOnce();
    }

    @Test
    void transactionalWorkersNeverRunMoreJobsOfAKeyThanItsLimit() throws Exception {
        CountDownLatch handled = new CountDownLatch(JOBS_COUNT);
        runUntil(handled, transactionalWorker(4, handled), transactionalWorker(4, handled));
        assertNoKeyExceededItsLimitAndEveryJobRanOnce();
    }

    @Test
    void bothModesTogetherCountEachOthersJobs() throws Exception {
        CountDownLatch done = new CountDownLatch(JOBS_COUNT);
        runUntil(done, jobWorker(counting(done)), jobWorker(counting(done)), transactionalWorker(4, done));
        assertNoKeyExceededItsLimitAndEveryJobRanOnce();
    }

    @Test
    void withoutTheLimitsTheSameWorkloadExceedsThem() throws Exception {
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
        runFourJobWorkersUntilEveryJobIsDone();
        // k0, k5, k10 and k15 would have limit 1: unlimited, their jobs overlap
        int exceeded = 0;
        for (int k = 0; k < KEYS; k++) {
            if (recorder.most("k" + k) > limitOf(k)) {
                exceeded++;
            }
        }
        assertThat(exceeded).isPositive();
        assertThat(recorder.runs.size()).isEqualTo(JOBS_COUNT);
    }

    @Test
    void aClaimThatChecksTheCountAfterClaimingRunsTwoJobsOfAKeyOfLimitOneAndGivesOneBack() {
        // the naive limit, with the limits table ignored: claim, count the key's running jobs, give
        // back what is over the limit; two claimers, one after the other
        Job first = naiveClaimOf("k0", "a");
        Job second = naiveClaimOf("k0", "b");
        // between the second claim and its count, two jobs of k0 were running: over its limit of 1
        assertThat(runningOf("k0")).isEqualTo(2);
        // the count then gives one back: a claim and a release for nothing
        assertThat(queue.release(second)).isTrue();
        assertThat(runningOf("k0")).isEqualTo(1);
        assertThat(queue.release(first)).isTrue();

        // the library's claim: the second claimer gets no job of k0 (limit 1), and counts no attempt
        List<Job> a = queue.claim(QUEUE, 1, Duration.ofMinutes(5), "a");
        assertThat(a).extracting(Job::concurrencyKey).containsExactly("k0");
        int attemptsBefore = attemptsOfPending("k0");
        List<Job> b = queue.claim(QUEUE, KEYS, Duration.ofMinutes(5), "b");
        assertThat(b).isNotEmpty().extracting(Job::concurrencyKey).doesNotContain("k0");
        assertThat(runningOf("k0")).isEqualTo(1);
        assertThat(attemptsOfPending("k0"))
                .as("k0's jobs held back, attempts not counted")
                .isEqualTo(attemptsBefore);
        assertThat(complete(a.get(0))).isTrue();
        assertThat(queue.claim(QUEUE, 100, Duration.ofMinutes(5), "c"))
                .extracting(Job::concurrencyKey)
                .containsOnlyOnce("k0");
    }

    /** A claim of one job of {@code key} (limits ignored), as a naive limit claims it before counting. */
    private Job naiveClaimOf(String key, String worker) {
        return dsl.transactionResult(c -> {
            Long id = c.dsl()
                    .select(JOBS.ID)
                    .from(JOBS)
                    .where(JOBS.CONCURRENCY_KEY.eq(key).and(JOBS.STATUS.eq("pending")))
                    .orderBy(JOBS.ID)
                    .limit(1)
                    .forUpdate()
                    .skipLocked()
                    .fetchOne(JOBS.ID);
            c.dsl()
                    .update(JOBS)
                    .set(JOBS.STATUS, "running")
                    .set(JOBS.LOCKED_BY, worker)
                    .set(JOBS.LOCKED_UNTIL, java.time.OffsetDateTime.now().plusMinutes(5))
                    .set(JOBS.LEASE_ID, java.util.UUID.randomUUID())
                    .set(JOBS.ATTEMPTS, JOBS.ATTEMPTS.plus(1))
                    .set(JOBS.FENCE, JOBS.FENCE.plus(1))
                    .where(JOBS.ID.eq(id))
                    .execute();
            return queue.find(c.dsl(), id).orElseThrow();
        });
    }

    private int attemptsOfPending(String key) {
        return dsl.select(org.jooq.impl.DSL.sum(JOBS.ATTEMPTS))
                .from(JOBS)
                .where(JOBS.CONCURRENCY_KEY.eq(key).and(JOBS.STATUS.eq("pending")))
                .fetchOne(0, Integer.class);
    }

    private boolean complete(Job job) {
        Boolean completed = dsl.transactionResult(c -> queue.complete(c.dsl(), job));
        return completed;
    }

    private int runningOf(String key) {
        return dsl.fetchCount(JOBS, JOBS.CONCURRENCY_KEY.eq(key).and(JOBS.STATUS.eq("running")));
    }

    @Test
    void oneKeyWithThousandsOfJobsDoesNotHoldBackTheOthers() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
        limits.setDefault(dsl, QUEUE, 4);
        // the big key's 2,000 jobs first in claim order, then 99 keys x 10
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            jobs.add(NewJob.builder(QUEUE, "work").concurrencyKey("big").build());
        }
        for (int k = 0; k < 99; k++) {
            for (int i = 0; i < 10; i++) {
                jobs.add(NewJob.builder(QUEUE, "work")
                        .concurrencyKey(String.format("small-%02d", k))
                        .build());
            }
        }
        for (int from = 0; from < jobs.size(); from += 500) {
            queue.enqueueAll(dsl, jobs.subList(from, Math.min(jobs.size(), from + 500)));
        }
        // one claimer, batches of 10, each job completed at once: the start order
        Map<String, Integer> claimedPerKey = new LinkedHashMap<>();
        int small = 0;
        int bigBeforeTheSmallWereDone = 0;
        while (small < 990) {
            List<Job> claimed = queue.claim(QUEUE, 10, Duration.ofMinutes(5), "one");
            assertThat(claimed).isNotEmpty();
            for (Job job : claimed) {
                claimedPerKey.merge(job.concurrencyKey(), 1, Integer::sum);
                if (job.concurrencyKey().equals("big")) {
                    bigBeforeTheSmallWereDone++;
                } else {
                    small++;
                }
            }
            assertThat(queue.completeAll(dsl, claimed)).isEqualTo(claimed.size());
        }
        // round robin: the big key had a turn per lap (4 jobs at most), the 99 others theirs; in
        // claim order alone all 2,000 of its jobs would have gone first
        assertThat(claimedPerKey).hasSize(100);
        assertThat(bigBeforeTheSmallWereDone).isBetween(1, 4 * 10);
    }

    @Test
    void aLapsedLeaseHoldsItsSlotUntilItIsRescued() throws Exception {
        List<Job> lapsing = queue.claim(QUEUE, 1, Duration.ofMillis(1), "gone");
        assertThat(lapsing).extracting(Job::concurrencyKey).containsExactly("k0"); // limit 1
        // wait until the lease has lapsed (by the database's clock): pg_sleep outlasts it
        dsl.execute("SELECT pg_sleep(0.01)");
        assertThat(dsl.fetchCount(
                        JOBS,
                        JOBS.STATUS.eq("running").and(JOBS.LOCKED_UNTIL.lt(org.jooq.impl.DSL.currentOffsetDateTime()))))
                .isEqualTo(1);
        List<Job> others = queue.claim(QUEUE, 100, Duration.ofMinutes(5), "next");
        assertThat(others).extracting(Job::concurrencyKey).doesNotContain("k0");
        queue.completeAll(dsl, others);
        assertThat(queue.rescueExpired()).isEqualTo(1);
        assertThat(queue.claim(QUEUE, 100, Duration.ofMinutes(5), "after"))
                .extracting(Job::concurrencyKey)
                .containsOnlyOnce("k0");
    }

    @Test
    void afterALimitIsLoweredAKeyGetsNoMoreUntilItsRunningJobsFitIt() {
        limits.set(dsl, QUEUE, "k0", 3);
        // one claim reaches every key: k0's three slots among them
        List<Job> three = queue.claim(QUEUE, 100, Duration.ofMinutes(5), "w").stream()
                .filter(job -> job.concurrencyKey().equals("k0"))
                .toList();
        assertThat(three).hasSize(3);
        assertThat(runningOf("k0")).isEqualTo(3);
        limits.set(dsl, QUEUE, "k0", 1);
        // slots 1 and 2 freed; the job in slot 3 still runs: over the new limit, so none of k0
        Job inSlotThree = three.stream()
                .filter(j -> dsl.select(JOBS.KEY_SLOT)
                                .from(JOBS)
                                .where(JOBS.ID.eq(j.id()))
                                .fetchOne(JOBS.KEY_SLOT)
                        == 3)
                .findFirst()
                .orElseThrow();
        for (Job job : three) {
            if (job != inSlotThree) {
                assertThat(complete(job)).isTrue();
            }
        }
        assertThat(queue.claim(QUEUE, 100, Duration.ofMinutes(5), "w"))
                .extracting(Job::concurrencyKey)
                .doesNotContain("k0");
        assertThat(complete(inSlotThree)).isTrue();
        assertThat(queue.claim(QUEUE, 100, Duration.ofMinutes(5), "w"))
                .extracting(Job::concurrencyKey)
                .containsOnlyOnce("k0");
    }

    @Test
    void anOpenTransactionalClaimHoldsItsSlotAgainstALeasedClaimOnAnotherConnection() throws Exception {
        // k0 has limit 1; a transactional claim of its one job stays open on one connection
        try (var held = pool.getConnection()) {
            held.setAutoCommit(false);
            DSLContext tx = org.jooq.impl.DSL.using(held, org.jooq.SQLDialect.POSTGRES);
            List<Job> inTransaction = queue.claimInTransaction(tx, QUEUE, 1);
            assertThat(inTransaction).extracting(Job::concurrencyKey).containsExactly("k0");
            // meanwhile a leased claim on another connection reaches every key but k0
            List<Job> leased = queue.claim(QUEUE, 100, Duration.ofMinutes(5), "other");
            assertThat(leased).isNotEmpty().extracting(Job::concurrencyKey).doesNotContain("k0");
            held.commit();
        }
        // committed, the transactional claim's job is gone and k0's slot free again
        assertThat(queue.claim(QUEUE, 100, Duration.ofMinutes(5), "after"))
                .extracting(Job::concurrencyKey)
                .containsOnlyOnce("k0");
    }

    @Test
    void jobsClaimedBeforeTheirKeyHadALimitCountAgainstIt() {
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
        // no limits: the plain claim takes keyed jobs too, in no slot
        List<Job> k0 = new ArrayList<>();
        for (int i = 0; i < 25 && k0.size() < 3; i++) {
            queue.claim(QUEUE, 20, Duration.ofMinutes(5), "w").stream()
                    .filter(job -> job.concurrencyKey().equals("k0"))
                    .forEach(k0::add);
        }
        assertThat(k0).hasSizeGreaterThanOrEqualTo(3);
        limits.set(dsl, QUEUE, "k0", 2);
        limits.setDefault(dsl, QUEUE, 1); // the other keys: at most one each, so claims stay small
        // 3 or more of k0 running, limit 2: none of k0, however many are asked for
        assertThat(queue.claim(QUEUE, 100, Duration.ofMinutes(5), "w"))
                .extracting(Job::concurrencyKey)
                .doesNotContain("k0");
        for (Job job : k0.subList(0, k0.size() - 1)) {
            assertThat(complete(job)).isTrue();
        }
        // one still running (in no slot): one more fits
        assertThat(queue.claim(QUEUE, 100, Duration.ofMinutes(5), "w"))
                .extracting(Job::concurrencyKey)
                .containsOnlyOnce("k0");
        assertThat(runningOf("k0")).isEqualTo(2);
    }

    @Test
    void heldBackCountsTheKeysAtTheirLimitAndTheirDueJobs() {
        assertThat(limits.heldBack(QUEUE, 1000)).isEqualTo(new ConcurrencyLimits.HeldBack(0, 0, 1000));
        // k0 (limit 1) and k5 (limit 1) at their limits, k1 (limit 2) not
        List<Job> claimed = new ArrayList<>();
        for (int i = 0;
                i < 40
                        && claimed.stream()
                                        .filter(j -> j.concurrencyKey().equals("k1"))
                                        .count()
                                < 1;
                i++) {
            claimed.addAll(queue.claim(QUEUE, 1, Duration.ofMinutes(5), "w"));
        }
        Map<String, Long> running = new java.util.TreeMap<>();
        claimed.forEach(j -> running.merge(j.concurrencyKey(), 1L, Long::sum));
        long atLimit = running.entrySet().stream()
                .filter(e -> e.getValue() >= limitOf(Integer.parseInt(e.getKey().substring(1))))
                .count();
        ConcurrencyLimits.HeldBack held = limits.heldBack(QUEUE, 1000);
        assertThat(held.keysAtLimit()).isEqualTo(atLimit).isPositive();
        // each key at its limit holds back its other (pending, due) jobs
        assertThat(held.jobsHeldBack())
                .isEqualTo((int) atLimit * PER_KEY
                        - (int) running.entrySet().stream()
                                .filter(e -> e.getValue()
                                        >= limitOf(Integer.parseInt(e.getKey().substring(1))))
                                .mapToLong(Map.Entry::getValue)
                                .sum());
        assertThat(limits.heldBack(QUEUE, 3).jobsHeldBack()).isEqualTo(3);
    }

    @Test
    void badInputIsRefusedAndNothingIsWritten() {
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
        assertThatThrownBy(() -> limits.set(dsl, QUEUE, "k0", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxRunning");
        assertThatThrownBy(() -> limits.setDefault(dsl, QUEUE, ConcurrencyLimits.MAX + 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> limits.set(dsl, QUEUE, " ", 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("concurrencyKey");
        assertThatThrownBy(() -> limits.set(dsl, "", "k0", 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> NewJob.builder(QUEUE, "work")
                        .concurrencyKey("x".repeat(257))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("concurrencyKey");
        assertThat(dsl.fetchCount(JOB_CONCURRENCY_LIMITS)).isZero();

        limits.setDefault(dsl, QUEUE, 3);
        limits.set(dsl, QUEUE, "k0", 1);
        limits.set(dsl, QUEUE, "k0", 2);
        ConcurrencyLimits.QueueLimits read = limits.of(dsl, QUEUE);
        assertThat(read.defaultPerKey()).isEqualTo(OptionalInt.of(3));
        assertThat(read.keys()).containsExactly(Map.entry("k0", 2));
        assertThat(read.limitOf("k9")).isEqualTo(OptionalInt.of(3));
        assertThat(limits.remove(dsl, QUEUE, "k0")).isTrue();
        assertThat(limits.remove(dsl, QUEUE, "k0")).isFalse();
        assertThat(limits.removeDefault(dsl, QUEUE)).isTrue();
        assertThat(limits.of(dsl, QUEUE).limitOf("k0")).isEmpty();
    }

    @Test
    void aLimitSetInARolledBackTransactionIsNotKept() {
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
        TransactionalRunnable setThenFail = c -> {
            limits.set(c.dsl(), QUEUE, "k0", 2);
            throw new IllegalStateException("rolled back");
        };
        assertThatThrownBy(() -> dsl.transaction(setThenFail)).hasMessageContaining("rolled back");
        assertThat(dsl.fetchCount(JOB_CONCURRENCY_LIMITS)).isZero();
    }

    @Test
    void aClaimOfAQueueWithLimitsInARepeatableReadTransactionIsRefused() {
        assertThatThrownBy(() -> dsl.transaction(c -> {
                    c.dsl().execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                    queue.claimInTransaction(c.dsl(), QUEUE, 5);
                }))
                .hasMessageContaining("READ COMMITTED");
        assertThat(dsl.fetchCount(JOBS, JOBS.STATUS.eq("pending"))).isEqualTo(JOBS_COUNT);
    }

    @Test
    void jobsWithoutAKeyAreClaimedBesideTheKeyedOnes() throws Exception {
        queue.enqueueAll(dsl, List.of(NewJob.of(QUEUE, "plain"), NewJob.of(QUEUE, "plain")));
        List<Job> claimed = new ArrayList<>();
        Concurrently.run(1, 60, t -> {
            while (claimed.stream().filter(j -> j.concurrencyKey() == null).count() < 2) {
                List<Job> jobs = queue.claim(QUEUE, 10, Duration.ofMinutes(5), "w");
                claimed.addAll(jobs);
                queue.completeAll(dsl, jobs);
            }
            return null;
        });
        assertThat(claimed).filteredOn(j -> j.concurrencyKey() == null).hasSize(2);
    }
}

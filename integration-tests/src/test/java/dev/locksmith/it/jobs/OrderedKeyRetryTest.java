package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Backoff;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A keyed job that fails and is rescheduled stays the head of its key: the jobs after it wait
 * through its backoff and its retries, until it succeeds or fails for good; other keys flow
 * meanwhile. In leased mode through the API (deterministic: the retry is made due by moving its
 * {@code run_at}, not by waiting) and through {@link JobWorker}; in transactional mode through
 * {@link TransactionalWorker}.
 */
class OrderedKeyRetryTest extends DatabaseTest {

    private static final Duration LEASE = Duration.ofMinutes(5);
    private static final JobQueueConfig FAST_RETRY = JobQueueConfig.builder()
            .retryBackoff(new Backoff(Duration.ofMillis(1), Duration.ofMillis(1), 1.0, 0.0))
            .build();
    /** Jobs of the other keys, b and c, that must flow while a's head fails. */
    private static final int OTHERS = 20;

    private JobQueue queue;

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_HISTORY).execute();
        queue = new JobQueue(dsl);
    }

    private long keyed(String key, int maxAttempts) {
        return queue.enqueue(
                dsl,
                NewJob.builder("retry", key)
                        .orderingKey(key)
                        .maxAttempts(maxAttempts)
                        .build());
    }

    private static List<Long> ids(List<Job> jobs) {
        return jobs.stream().map(Job::id).toList();
    }

    @Test
    void aRescheduledHeadHoldsItsKeyThroughItsBackoffAndAFinalFailureReleasesIt() {
        long a1 = keyed("a", 2);
        long a2 = keyed("a", 2);
        long b1 = keyed("b", 2);
        long b2 = keyed("b", 2);
        List<Job> first = queue.claim("retry", 10, LEASE, "w");
        assertThat(ids(first)).containsExactly(a1, b1);

        FailResult retry = dsl.transactionResult(c -> queue.fail(c.dsl(), first.get(0), "boom"));
        assertThat(retry.outcome()).isEqualTo(FailResult.Outcome.RETRY_SCHEDULED);
        dsl.transaction(c -> queue.complete(c.dsl(), first.get(1)));
        // a1 waits for its retry (default backoff, about a second): a2 still waits behind it, b flows
        assertThat(ids(queue.claim("retry", 10, LEASE, "w"))).containsExactly(b2);

        dsl.execute("UPDATE locksmith.jobs SET run_at = now() WHERE id = ?", a1); // the backoff has passed
        List<Job> again = queue.claim("retry", 10, LEASE, "w");
        assertThat(ids(again)).containsExactly(a1);
        assertThat(again.get(0).attempts()).isEqualTo(2);

        FailResult failed = dsl.transactionResult(c -> queue.fail(c.dsl(), again.get(0), "boom again"));
        assertThat(failed.outcome()).isEqualTo(FailResult.Outcome.FAILED);
        assertThat(ids(queue.claim("retry", 10, LEASE, "w"))).containsExactly(a2);
        assertThat(queue.find(dsl, a1).orElseThrow().status()).isEqualTo(JobStatus.FAILED);
    }

    /** Runs of the handler in start order: job, attempt outcome, and counter stamps. */
    private record Run(long id, String key, boolean failed, long start, long end) {}

    /**
     * Key a's head fails {@code failures} times (its first attempt only after every job of keys b
     * and c has run while it was in its handler), then succeeds, unless that is more than
     * {@code maxAttempts} allows; a2 and a3 follow.
     */
    private final class Scenario {
        final int failures;
        final long a1;
        final List<Long> rest = new ArrayList<>();
        final List<Run> runs = new CopyOnWriteArrayList<>();
        final AtomicLong counter = new AtomicLong();
        final AtomicInteger a1Runs = new AtomicInteger();
        final CountDownLatch othersHandled = new CountDownLatch(OTHERS);
        final CountDownLatch lastHandled = new CountDownLatch(1);
        final java.util.Set<Long> others = ConcurrentHashMap.newKeySet();
        volatile boolean othersRanWhileHeadWasInFlight;

        Scenario(int failures, int maxAttempts) {
            this.failures = failures;
            a1 = keyed("a", maxAttempts);
            for (int i = 0; i < OTHERS; i++) {
                others.add(keyed(i % 2 == 0 ? "b" : "c", maxAttempts));
            }
            rest.add(keyed("a", maxAttempts));
            rest.add(keyed("a", maxAttempts));
        }

        void handle(Job job, DSLContext tx) throws Exception {
            long start = counter.incrementAndGet();
            boolean fail = false;
            try {
                if (job.id() == a1) {
                    int run = a1Runs.incrementAndGet();
                    if (run == 1) {
                        othersRanWhileHeadWasInFlight = othersHandled.await(60, TimeUnit.SECONDS);
                    }
                    fail = run <= failures;
                    if (fail) {
                        throw new IllegalStateException("run " + run + " of the head fails");
                    }
                }
            } finally {
                runs.add(new Run(job.id(), job.orderingKey(), fail, start, counter.incrementAndGet()));
                if (others.contains(job.id())) {
                    othersHandled.countDown();
                }
                if (job.id() == rest.get(1)) {
                    lastHandled.countDown();
                }
            }
        }

        /** Checks key a's runs: a1's attempts, then a2, then a3, never overlapping. */
        void verify(int expectedA1Runs) {
            assertThat(othersRanWhileHeadWasInFlight)
                    .as("keys b and c ran while a's head was in its handler")
                    .isTrue();
            List<Run> a = runs.stream()
                    .filter(r -> r.key().equals("a"))
                    .sorted(java.util.Comparator.comparingLong(Run::start))
                    .toList();
            List<Long> expected = new ArrayList<>();
            for (int i = 0; i < expectedA1Runs; i++) {
                expected.add(a1);
            }
            expected.addAll(rest);
            assertThat(a).extracting(Run::id).containsExactlyElementsOf(expected);
            for (int i = 1; i < a.size(); i++) {
                assertThat(a.get(i).start())
                        .as("run %d of key a starts after run %d ended", i, i - 1)
                        .isGreaterThan(a.get(i - 1).end());
            }
            assertThat(runs.stream().filter(r -> others.contains(r.id())).count())
                    .isEqualTo(OTHERS);
        }
    }

    @ParameterizedTest(name = "head fails {0} times, max attempts {1}")
    @CsvSource({"2, 5", "3, 3"})
    void jobWorkersHoldAFailingHeadsKeyUntilItSucceedsOrFailsForGood(int failures, int maxAttempts) throws Exception {
        Scenario s = new Scenario(failures, maxAttempts);
        try (JobWorker worker = JobWorker.builder(new JobQueue(Locksmith.of(pool), FAST_RETRY), "retry", s::handle)
                .threads(4)
                .pollInterval(Duration.ofMillis(20))
                .listen(false)
                .build()
                .start()) {
            assertThat(s.lastHandled.await(60, TimeUnit.SECONDS)).isTrue();
        }
        boolean forGood = failures >= maxAttempts;
        s.verify(forGood ? maxAttempts : failures + 1);
        assertThat(dsl.fetchCount(JOBS)).isZero();
        assertThat(dsl.fetchCount(JOB_HISTORY))
                .as("a job failed for good is kept")
                .isEqualTo(forGood ? 1 : 0);
        if (forGood) {
            assertThat(queue.find(dsl, s.a1).orElseThrow().status()).isEqualTo(JobStatus.FAILED);
        }
    }

    @ParameterizedTest(name = "head fails {0} times, max attempts {1}")
    @CsvSource({"2, 5", "3, 3"})
    void transactionalWorkersHoldAFailingHeadsKeyUntilItSucceedsOrFailsForGood(int failures, int maxAttempts)
            throws Exception {
        Scenario s = new Scenario(failures, maxAttempts);
        // one job per transaction, each under a savepoint: every failure is written back as a retry
        try (TransactionalWorker worker = TransactionalWorker.builder(
                        new JobQueue(Locksmith.of(pool), FAST_RETRY), "retry", (jobs, tx) -> {
                            for (Job job : jobs) {
                                s.handle(job, tx);
                            }
                        })
                .threads(4)
                .batchSize(1)
                .isolateEachJob(true)
                .pollInterval(Duration.ofMillis(20))
                .listen(false)
                .build()
                .start()) {
            assertThat(s.lastHandled.await(60, TimeUnit.SECONDS)).isTrue();
        }
        boolean forGood = failures >= maxAttempts;
        s.verify(forGood ? maxAttempts : failures + 1);
        assertThat(dsl.fetchCount(JOBS)).isZero();
        assertThat(dsl.fetchCount(JOB_HISTORY))
                .as("a job failed for good is kept")
                .isEqualTo(forGood ? 1 : 0);
        if (forGood) {
            Job a1 = queue.find(dsl, s.a1).orElseThrow();
            assertThat(a1.status()).isEqualTo(JobStatus.FAILED);
            assertThat(a1.orderingKey()).as("written back with its key").isEqualTo("a");
        }
    }
}

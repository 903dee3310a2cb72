package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.PreparedJob;
import dev.locksmith.jobs.TwoPhaseJobHandler;
import dev.locksmith.jobs.TwoPhaseSeams;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.jobs.Worker;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.Outcome;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code TwoPhaseWorker} on a queue with concurrency limits: a job it claims holds a slot of its
 * key from the claim until its prepared transaction is committed or rolled back, counted by every
 * other claim, whichever worker mode makes it; and a prepared transaction still in doubt after
 * the claim's hold keeps the slot.
 */
class TwoPhaseConcurrencyLimitsTest extends TwoPhaseTest {

    static final String QUEUE = "limited-2pc";
    static final int KEYS = 10;
    static final int PER_KEY = 12;
    static final int JOBS_COUNT = KEYS * PER_KEY;

    private final ConcurrencyLimitsTest.Recorder recorder = new ConcurrencyLimitsTest.Recorder();
    private final Set<Long> ranTwoPhase = ConcurrentHashMap.newKeySet();

    @Override
    protected int poolSize() {
        return 40;
    }

    /** Key {@code k2} has limit 1 + 2 % 3 = 3: limits 1 to 3. */
    static int limitOf(int key) {
        return 1 + key % 3;
    }

    @BeforeEach
    void noLimitsYet() {
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
    }

    /** A job of the key {@code solo}. */
    private long soloJob() {
        return queue.enqueue(
                dsl, NewJob.builder(QUEUE, "work").concurrencyKey("solo").build());
    }

    /** A worker of one thread, polling every 20 ms, that reports to {@code observer}. */
    private TwoPhaseWorker.Builder oneThread(LocksmithObserver observer) {
        return TwoPhaseWorker.builder(observed(observer), QUEUE, recording(), ledgerCheck())
                .threads(1)
                .pollInterval(Duration.ofMillis(20));
    }

    /**
     * The two-phase handler as the recorder sees it: a run starts with the database work (after
     * the job was claimed and taken) and ends with the side effect (before COMMIT PREPARED), a few
     * milliseconds later; the slot is held from before the one to after the other.
     */
    private TwoPhaseJobHandler recordingRuns() {
        return new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                recorder.started(job);
                ranTwoPhase.add(job.id());
            }

            @Override
            public void performSideEffect(PreparedJob job) {
                try {
                    dsl.execute("SELECT pg_sleep(0.003)");
                } finally {
                    recorder.ended(job.job());
                }
            }
        };
    }

    @Test
    void twoPhaseAndLeasedWorkersTogetherNeverRunMoreJobsOfAKeyThanItsLimit() throws Exception {
        ConcurrencyLimitsTest.enqueueKeyed(queue, dsl, QUEUE, KEYS, PER_KEY, TwoPhaseConcurrencyLimitsTest::limitOf);
        CountDownLatch done = new CountDownLatch(JOBS_COUNT);
        List<Worker> workers = new ArrayList<>();
        try {
            for (int w = 0; w < 2; w++) {
                workers.add(TwoPhaseWorker.builder(
                                observed(counting(JobEvent.COMPLETED, done)), QUEUE, recordingRuns(), ledgerCheck())
                        .threads(3)
                        .pollInterval(Duration.ofMillis(20))
                        .build()
                        .start());
            }
            workers.add(JobWorker.builder(
                            new JobQueue(observed(counting(JobEvent.COMPLETED, done))),
                            QUEUE,
                            (job, tx) -> recorder.run(tx, job))
                    .threads(2)
                    .pollInterval(Duration.ofMillis(20))
                    .build()
                    .start());
            await(done, "every job completed");
        } finally {
            workers.forEach(Worker::close);
        }
        recorder.assertWithinLimitsEachRanOnce(KEYS, TwoPhaseConcurrencyLimitsTest::limitOf, JOBS_COUNT);
        assertThat(ranTwoPhase.size())
                .as("jobs the two-phase workers ran; the leased worker ran the others")
                .isBetween(1, JOBS_COUNT - 1);
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void aJobThatWaitsForItsRetryOrItsSnoozeGivesItsSlotBack() throws Exception {
        queue.concurrencyLimits().set(dsl, QUEUE, "solo", 1);
        long retried = queue.enqueue(
                dsl, NewJob.builder(QUEUE, "retry").concurrencyKey("solo").build());
        long snoozed = queue.enqueue(
                dsl, NewJob.builder(QUEUE, "snooze").concurrencyKey("solo").build());
        long last = soloJob();
        CountDownLatch done = new CountDownLatch(1);
        TwoPhaseJobHandler handler = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                // an hour each: held in their slot meanwhile, the last job would wait that long
                switch (job.kind()) {
                    case "retry" -> throw JobControl.retryAfter(Duration.ofHours(1), "later");
                    case "snooze" -> throw JobControl.snooze(Duration.ofHours(1));
                    default -> tx.execute("INSERT INTO twophase_results VALUES (?)", job.id());
                }
            }

            @Override
            public void performSideEffect(PreparedJob job) {
                recordEffect(job);
            }
        };
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        observed(counting(JobEvent.COMPLETED, done)), QUEUE, handler, ledgerCheck())
                .threads(1)
                .pollInterval(Duration.ofMillis(20))
                .build()
                .start()) {
            await(done, "the last job completed");
        }
        assertThat(results()).containsOnlyKeys(last);
        assertThat(dsl.select(JOBS.ID).from(JOBS).orderBy(JOBS.ID).fetch(JOBS.ID))
                .as("the two jobs waiting an hour")
                .containsExactly(retried, snoozed);
        assertThat(dsl.fetchCount(JOBS, JOBS.KEY_SLOT.isNotNull()))
                .as("jobs in a slot")
                .isZero();
    }

    @Test
    void aHeldJobCountsAsRunningInWhatTheLimitsHoldBack() throws Exception {
        queue.concurrencyLimits().set(dsl, QUEUE, "solo", 1);
        long first = soloJob();
        soloJob();
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(2);
        try (TwoPhaseWorker worker = TwoPhaseSeams.beforeTake(oneThread(counting(JobEvent.COMPLETED, done)), job -> {
                    if (job.id() == first) {
                        claimed.countDown();
                        assertThat(proceed.await(TIMEOUT_SECONDS, TimeUnit.SECONDS))
                                .isTrue();
                    }
                })
                .build()
                .start()) {
            await(claimed, "the first job was claimed and held");
            assertThat(queue.concurrencyLimits().heldBack(QUEUE, 100))
                    .isEqualTo(new ConcurrencyLimits.HeldBack(1, 1, 100));
            assertThat(queue.concurrencyLimits().heldBackByKey(QUEUE, 10, 100))
                    .containsExactly(new ConcurrencyLimits.KeyHeldBack("solo", 1, 1));
            proceed.countDown();
            await(done, "both jobs completed");
        }
        assertThat(queue.concurrencyLimits().heldBack(QUEUE, 100)).isEqualTo(new ConcurrencyLimits.HeldBack(0, 0, 100));
    }

    @Test
    void aPreparedTransactionInDoubtAfterItsHoldKeepsItsSlot() throws Exception {
        queue.concurrencyLimits().set(dsl, QUEUE, "solo", 1);
        long first = soloJob();
        long second = soloJob();
        CountDownLatch prepared = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(2);
        // a hold of a second (a worker's is a minute at least), which runs out while the first
        // job's transaction is prepared, as after a crash before the resolver settled it
        try (TwoPhaseWorker worker = TwoPhaseSeams.holdingFor(
                        oneThread(counting(JobEvent.COMPLETED, done)), Duration.ofSeconds(1), (job, backendPid) -> {
                            if (job.job().id() == first) {
                                prepared.countDown();
                                assertThat(proceed.await(TIMEOUT_SECONDS, TimeUnit.SECONDS))
                                        .isTrue();
                            }
                        })
                .build()
                .start()) {
            await(prepared, "the first job was prepared");
            // on the database's clock, until the hold has run out
            dsl.execute(
                    "SELECT pg_sleep(greatest(0, extract(epoch FROM (run_at - clock_timestamp())) + 0.05))"
                            + " FROM locksmith.jobs WHERE id = ?",
                    first);
            assertThat(dsl.fetchValue("SELECT key_slot < 0 AND run_at < now() FROM locksmith.jobs WHERE id = ?", first))
                    .as("the held row no longer counts: its hold ran out")
                    .isEqualTo(true);
            // the prepared transaction, in doubt past its hold, still holds the key's only slot
            assertThat(queue.claim(QUEUE, 1, Duration.ofMinutes(5), "other"))
                    .as("a claim while the first job's transaction is prepared")
                    .isEmpty();
            assertThat(queue.find(dsl, second).orElseThrow().attempts()).isZero();

            proceed.countDown();
            await(done, "both jobs completed");
        }
        assertThat(results()).containsOnlyKeys(first, second);
        assertThat(effects()).containsOnlyKeys(first, second);
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void aTakeAfterTheHoldRanOutLeavesTheSlotToTheClaimThatTookItAndGivesTheJobBack() throws Exception {
        queue.concurrencyLimits().set(dsl, QUEUE, "solo", 1);
        long first = soloJob();
        long second = soloJob();
        AtomicReference<List<Job>> other = new AtomicReference<>();
        AtomicReference<Outcome> outcome = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        CountDownLatch completed = new CountDownLatch(1);
        try (TwoPhaseWorker worker = TwoPhaseSeams.beforeTake(
                        oneThread(firstOutcome(outcome, ended, completed)), job -> {
                            if (job.id() == first && other.get() == null) {
                                // the hold runs out (moved here by hand) before the job is taken,
                                // and a leased claim takes the key's only slot meanwhile, for the
                                // second job (due earlier, so first in claim order)
                                dsl.execute(
                                        "UPDATE locksmith.jobs SET run_at = now() - interval '1 second' WHERE id = ?",
                                        first);
                                dsl.execute(
                                        "UPDATE locksmith.jobs SET run_at = now() - interval '1 hour' WHERE id = ?",
                                        second);
                                other.set(queue.claim(QUEUE, 1, Duration.ofMinutes(5), "other"));
                            }
                        })
                .build()
                .start()) {
            await(ended, "the worker's first attempt ended");
            assertThat(outcome.get()).isEqualTo(Outcome.LEASE_LOST);
            assertThat(other.get())
                    .as("the leased claim made while the hold had run out")
                    .extracting(Job::id)
                    .containsExactly(second);
            assertThat(results())
                    .as("the first job did not run beside the second")
                    .isEmpty();
            Job given = queue.find(dsl, first).orElseThrow();
            assertThat(given.status()).isEqualTo(JobStatus.PENDING);
            assertThat(given.attempts())
                    .as("given back: its attempt not counted")
                    .isZero();

            assertThat(queue.complete(dsl, other.get().get(0))).isTrue();
            await(completed, "the first job completed once the second had");
        }
        assertThat(results()).containsOnlyKeys(first);
    }

    @Test
    void aTakeThatCannotHaveTheSlotsLockGivesTheJobBack() throws Exception {
        queue.concurrencyLimits().set(dsl, QUEUE, "solo", 1);
        long first = soloJob();
        AtomicReference<Connection> holder = new AtomicReference<>();
        AtomicReference<Outcome> outcome = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        CountDownLatch completed = new CountDownLatch(1);
        try (TwoPhaseWorker worker = TwoPhaseSeams.beforeTake(
                        oneThread(firstOutcome(outcome, ended, completed)), job -> {
                            if (holder.get() == null) {
                                // what a claim that locked the slot before it saw the hold holds
                                // until its transaction ends (a transactional claim, for longer
                                // than the take's ten-second wait)
                                Connection c = pool.getConnection();
                                c.setAutoCommit(false);
                                DSL.using(c)
                                        .execute(
                                                "SELECT pg_advisory_xact_lock(hashtext(? || chr(31) || ?), 1)",
                                                QUEUE,
                                                "solo");
                                holder.set(c);
                            }
                        })
                .build()
                .start()) {
            try {
                await(ended, "the worker's first attempt ended");
                assertThat(outcome.get()).isEqualTo(Outcome.LEASE_LOST);
                // while the lock is held, no claim can have the job again
                Job given = queue.find(dsl, first).orElseThrow();
                assertThat(given.status()).isEqualTo(JobStatus.PENDING);
                assertThat(given.attempts())
                        .as("given back: its attempt not counted")
                        .isZero();
                assertThat(results()).isEmpty();
            } finally {
                holder.get().rollback();
                holder.get().close();
            }
            await(completed, "the job completed once the slot's lock was free");
        }
        assertThat(results()).containsOnlyKeys(first);
    }
}

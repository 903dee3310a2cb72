package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Backoff;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.WakeUp;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The worker runtime on real connections: wake-ups, failures, slots and shutdown. */
class JobWorkerTest extends DatabaseTest {

    private JobQueue queue;
    private final List<String> events = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        dsl.execute("DROP TABLE IF EXISTS worker_results");
        dsl.execute("CREATE TABLE worker_results (job_id bigint NOT NULL)");
        queue = new JobQueue(dsl);
        events.clear();
    }

    /** Records events in order and opens latches on the ones tests wait for. */
    private class Recorder extends WorkerEvents {
        final CountDownLatch listening = new CountDownLatch(1);
        final CountDownLatch idle = new CountDownLatch(1);
        final CountDownLatch completed;
        final CountDownLatch failedForGood = new CountDownLatch(1);

        Recorder(int expectedCompletions) {
            completed = new CountDownLatch(expectedCompletions);
        }

        @Override
        public void listening() {
            events.add("listening");
            listening.countDown();
        }

        @Override
        public void idle() {
            events.add("idle");
            idle.countDown();
        }

        @Override
        public void woke(Wake reason) {
            if (reason != Wake.INTERNAL) {
                events.add("woke:" + reason);
            }
        }

        @Override
        public void completed(Job job) {
            events.add("completed:" + job.id());
            completed.countDown();
        }

        @Override
        public void failed(Job job, FailResult.Outcome outcome) {
            events.add("failed:" + job.id() + ":" + outcome);
            if (outcome == FailResult.Outcome.FAILED) {
                failedForGood.countDown();
            }
        }

        @Override
        public void released(Job job) {
            events.add("released:" + job.id());
        }
    }

    private JobHandler recordingHandler() {
        return (job, tx) -> tx.execute("INSERT INTO worker_results VALUES (?)", job.id());
    }

    /**
     * A started worker of {@code threads} threads whose poll is ten minutes away: only a
     * notification, or the worker itself, makes it claim after its first claims.
     */
    private JobWorker quietWorker(Recorder recorder, String queueName, int threads, JobHandler handler) {
        return JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool).observer(recorder).build()), queueName, handler)
                .threads(threads)
                .pollInterval(Duration.ofMinutes(10))
                .minPollInterval(Duration.ofMinutes(10)) // no adaptive poll before LISTEN is up
                .build()
                .start();
    }

    /** Waits on {@code monitor}, which the caller holds, until {@code done} or 30 s have passed. */
    private static void waitOn(Object monitor, java.util.function.BooleanSupplier done) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long left;
        while (!done.getAsBoolean() && (left = deadline - System.nanoTime()) > 0) {
            try {
                monitor.wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void await(CountDownLatch latch, String what) throws InterruptedException {
        assertThat(latch.await(30, TimeUnit.SECONDS)).as(what).isTrue();
    }

    @Test
    void notifyWakesAnIdleWorkerLongBeforeItsPollInterval() throws Exception {
        Recorder recorder = new Recorder(1);
        try (JobWorker worker = quietWorker(recorder, "notify", 2, recordingHandler())) {
            await(recorder.listening, "LISTEN established");
            await(recorder.idle, "worker idle");

            // NOTIFY from the producer's transaction and no in-process wake-up (which only the
            // wake-up after commit gives), as from a producer in another JVM
            long id = new JobQueue(
                            Locksmith.builder(pool).build(),
                            JobQueueConfig.builder()
                                    .wakeUp(WakeUp.IN_TRANSACTION)
                                    .build())
                    .enqueue(dsl, NewJob.of("notify", "k"));

            await(recorder.completed, "job completed");
            // with a 10-minute poll interval, only the notification can have woken the worker
            assertThat(events)
                    .containsSubsequence("idle", "woke:NOTIFICATION", "completed:" + id)
                    .doesNotContain("woke:POLL");
        }
        assertThat(dsl.fetchCount(JOBS)).isZero();
        assertThat(dsl.fetchCount(dsl.selectFrom("worker_results"))).isEqualTo(1);
    }

    /**
     * A job a notification announces to an idle worker is claimed on an idle handler thread,
     * which runs it itself: its handler runs on a thread that made a claim. A claim on the
     * claimer thread would hand the job to a handler thread, one more thread to wake before it
     * starts (and a handler thread claims only after it ran a job, so with one job none would).
     */
    @Test
    void anAnnouncedJobIsClaimedOnTheHandlerThreadThatRunsIt() throws Exception {
        List<String> claimedOn = new CopyOnWriteArrayList<>();
        List<String> ranOn = new CopyOnWriteArrayList<>();
        Recorder recorder = new Recorder(1) {
            @Override
            public Observation start(Operation operation) {
                if (operation instanceof Operation.ClaimJobs) {
                    claimedOn.add(Thread.currentThread().getName());
                }
                return Observation.NONE;
            }
        };
        JobHandler handler = (job, tx) -> ranOn.add(Thread.currentThread().getName());
        try (JobWorker worker = quietWorker(recorder, "handed", 2, handler)) {
            await(recorder.listening, "LISTEN established");
            await(recorder.idle, "worker idle");
            claimedOn.clear();
            long id = new JobQueue(
                            Locksmith.builder(pool).build(),
                            JobQueueConfig.builder()
                                    .wakeUp(WakeUp.IN_TRANSACTION)
                                    .build())
                    .enqueue(dsl, NewJob.of("handed", "k"));
            await(recorder.completed, "job completed");
            assertThat(events).containsSubsequence("woke:NOTIFICATION", "completed:" + id);
        }
        assertThat(ranOn).hasSize(1);
        assertThat(ranOn.get(0)).contains("handler");
        // woken, the claimer's claim would come first (a handler thread claims after its job; a
        // claim that filled what it asked for wakes the claimer after it, as a claimer claims on)
        assertThat(claimedOn)
                .as("threads that claimed after the worker went idle")
                .isNotEmpty();
        assertThat(claimedOn.get(0)).isEqualTo(ranOn.get(0));
    }

    /**
     * A job announced to an idle worker is claimed on a handler thread, which then looks for a
     * next one; its batched completion wakes no claimer while the completion backlog held none
     * back. An unconditional wake-up after each batch cost an empty claim on the claimer thread,
     * a third statement per job while jobs come one at a time.
     */
    @Test
    void aBatchedCompletionWakesNoClaimerWhileTheBacklogHeldNoneBack() throws Exception {
        AtomicBoolean watching = new AtomicBoolean();
        CountDownLatch claimerClaimed = new CountDownLatch(1);
        Recorder recorder = new Recorder(1) {
            @Override
            public Observation start(Operation operation) {
                if (operation instanceof Operation.ClaimJobs
                        && watching.get()
                        && Thread.currentThread().getName().contains("claimer")) {
                    claimerClaimed.countDown();
                }
                return Observation.NONE;
            }
        };
        try (JobWorker worker = quietWorker(recorder, "batched", 2, (job, tx) -> {})) {
            await(recorder.listening, "LISTEN established");
            await(recorder.idle, "worker idle");
            watching.set(true);
            // no in-process wake-up: the NOTIFY in the producer's transaction, as from another JVM
            long id = new JobQueue(
                            Locksmith.builder(pool).build(),
                            JobQueueConfig.builder()
                                    .wakeUp(WakeUp.IN_TRANSACTION)
                                    .build())
                    .enqueue(dsl, NewJob.of("batched", "k"));
            await(recorder.completed, "job completed");
            assertThat(events).contains("completed:" + id);
            assertThat(claimerClaimed.await(2, TimeUnit.SECONDS))
                    .as("a claim on the claimer thread after the job was announced, ran and was completed")
                    .isFalse();
        }
    }

    /**
     * While the completion backlog is full the worker claims nothing; the first batch that finds
     * it full (here the second: the first, held, measured its backlog before it filled) wakes the
     * claimers once it has been completed. The first batch's completion is held until the
     * handlers have filled the backlog and run every job claimed; with a 10-minute poll interval
     * only that wake-up can start the jobs left.
     */
    @Test
    void theBatchThatTakesAFullCompletionBacklogDownWakesTheClaimers() throws Exception {
        int jobs = 4_000;
        Object progress = new Object();
        int[] counts = new int[2]; // claimed, ran; guarded by progress
        AtomicInteger ranBeforeRelease = new AtomicInteger(-1);
        AtomicBoolean first = new AtomicBoolean(true);
        Recorder recorder = new Recorder(jobs) {
            @Override
            public void claimed(Job job) {
                synchronized (progress) {
                    counts[0]++;
                    progress.notifyAll();
                }
            }

            @Override
            public Observation start(Operation operation) {
                if (operation instanceof Operation.CompleteJobs c && first.getAndSet(false)) {
                    // the backlog (1,000 jobs for two threads) is full once the handlers have run
                    // this batch and 1,000 more; then they stop once every job claimed has run
                    int full = c.jobs().size() + 1_000;
                    synchronized (progress) {
                        waitOn(progress, () -> counts[1] >= full && counts[1] >= counts[0]);
                        ranBeforeRelease.set(counts[1]);
                    }
                }
                return Observation.NONE;
            }
        };
        List<NewJob> batch = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            batch.add(NewJob.of("backlog", "k" + i));
        }
        queue.enqueueAll(dsl, batch);
        try (JobWorker worker = quietWorker(recorder, "backlog", 2, (job, tx) -> {
            synchronized (progress) {
                counts[1]++;
                progress.notifyAll();
            }
        })) {
            // the first batch may be held up to 30 s on a slow machine: time for the rest after it
            assertThat(recorder.completed.await(120, TimeUnit.SECONDS))
                    .as("every job completed")
                    .isTrue();
        }
        assertThat(ranBeforeRelease.get())
                .as("jobs run before the first batch completed")
                .isBetween(1_000, jobs - 1);
        synchronized (progress) {
            assertThat(counts[1]).isEqualTo(jobs);
        }
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    /**
     * The next job of an ordering key, or of a concurrency key at its limit, becomes claimable
     * when its predecessor's completion commits: a batch that completed a keyed job wakes the
     * claimers, whatever the backlog. Each batch here is held until a claim made after the job
     * ran (the handler thread's look for a next one, or the claimer's in its place) found none:
     * the key's next job is not claimable yet. With a 10-minute poll interval only those
     * wake-ups can start the key's next jobs.
     */
    @Test
    void aBatchThatCompletedAKeyedJobWakesTheClaimersForTheKeysNextJob() throws Exception {
        queue.concurrencyLimits().set(dsl, "chain-c", "solo", 1);
        runsInTurn(
                "chain-o",
                i -> NewJob.builder("chain-o", "k").orderingKey("in-order").build());
        runsInTurn(
                "chain-c",
                i -> NewJob.builder("chain-c", "k").concurrencyKey("solo").build());
    }

    /** Three jobs of one key, run in turn by a worker of one thread. */
    private void runsInTurn(String queueName, java.util.function.IntFunction<NewJob> job) throws Exception {
        events.clear();
        List<String> inTurn = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            inTurn.add("completed:" + queue.enqueue(dsl, job.apply(i)));
        }
        Object progress = new Object();
        long[] lastRun = {-1}; // guarded by progress
        long[] idleAfter = {-1}; // guarded by progress
        Recorder recorder = new Recorder(3) {
            @Override
            public void idle() {
                // the handler thread's look after the job, or the claimer's claim in its place
                synchronized (progress) {
                    idleAfter[0] = lastRun[0];
                    progress.notifyAll();
                }
            }

            @Override
            public Observation start(Operation operation) {
                if (operation instanceof Operation.CompleteJobs c) {
                    long id = c.jobs().get(c.jobs().size() - 1).id();
                    synchronized (progress) {
                        waitOn(progress, () -> idleAfter[0] == id);
                    }
                }
                return Observation.NONE;
            }
        };
        try (JobWorker worker = quietWorker(recorder, queueName, 1, (j, tx) -> {
            synchronized (progress) {
                lastRun[0] = j.id();
            }
        })) {
            await(recorder.completed, "the key's jobs completed on " + queueName);
        }
        assertThat(events).containsSubsequence(inTurn);
    }

    @Test
    void withoutListenPollingStillFindsTheJob() throws Exception {
        Recorder recorder = new Recorder(1);
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool).observer(recorder).build()), "polled", recordingHandler())
                .listen(false)
                .pollInterval(Duration.ofMillis(50))
                .build()
                .start()) {
            await(recorder.idle, "worker idle");
            // a producer that wakes no one: a producer in this JVM would wake the worker in-process
            long id = new JobQueue(
                            Locksmith.builder(pool).build(),
                            JobQueueConfig.builder().wakeUp(WakeUp.NONE).build())
                    .enqueue(dsl, NewJob.of("polled", "k"));
            await(recorder.completed, "job completed");
            assertThat(events)
                    .containsSubsequence("idle", "woke:POLL", "completed:" + id)
                    .doesNotContain("listening", "woke:NOTIFICATION");
        }
    }

    @Test
    void handlerExceptionsAreRetriedWithBackoffThenFailWithTheMessageAndTheirWritesRolledBack() throws Exception {
        Recorder recorder = new Recorder(0);
        long id =
                queue.enqueue(dsl, NewJob.builder("failing", "k").maxAttempts(3).build());
        JobHandler exploding = (job, tx) -> {
            tx.execute("INSERT INTO worker_results VALUES (?)", job.id());
            throw new IllegalStateException("handler exploded on attempt " + job.attempts());
        };
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(
                                Locksmith.builder(pool).observer(recorder).build(),
                                JobQueueConfig.builder()
                                        .retryBackoff(
                                                new Backoff(Duration.ofMillis(10), Duration.ofMillis(100), 2.0, 0.0))
                                        .build()),
                        "failing",
                        exploding)
                .pollInterval(Duration.ofMillis(20))
                .build()
                .start()) {
            await(recorder.failedForGood, "job failed for good");
        }
        Job failed = queue.find(dsl, id).orElseThrow();
        assertThat(failed.status()).isEqualTo(JobStatus.FAILED);
        assertThat(failed.attempts()).isEqualTo(3);
        assertThat(failed.lastError()).contains("IllegalStateException").contains("handler exploded on attempt 3");
        assertThat(events)
                .containsSubsequence(
                        "failed:" + id + ":RETRY_SCHEDULED",
                        "failed:" + id + ":RETRY_SCHEDULED",
                        "failed:" + id + ":FAILED");
        assertThat(dsl.fetchCount(dsl.selectFrom("worker_results"))).isZero();
    }

    @Test
    void claimsNoMoreThanFreeSlotsAndShutdownLeavesNothingRunning() throws Exception {
        queue.enqueueAll(dsl, Collections.nCopies(10, NewJob.of("slow", "k")));
        CountDownLatch twoStarted = new CountDownLatch(2);
        CountDownLatch never = new CountDownLatch(1);
        JobHandler blocking = (job, tx) -> {
            twoStarted.countDown();
            never.await();
        };
        JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool)
                                .observer(new Recorder(0))
                                .build()),
                        "slow",
                        blocking)
                .threads(2)
                .shutdownGrace(Duration.ofMillis(200))
                .build()
                .start();
        try {
            await(twoStarted, "two handlers running");
            assertThat(dsl.fetchCount(JOBS, JOBS.STATUS.eq("running"))).isEqualTo(2);
        } finally {
            worker.close();
        }
        assertThat(dsl.fetchCount(JOBS, JOBS.STATUS.eq("running"))).isZero();
        assertThat(dsl.fetchCount(JOBS, JOBS.STATUS.eq("pending"))).isEqualTo(10);
        assertThat(dsl.fetchValues(JOBS.ATTEMPTS)).containsOnly(0);
        assertThat(events.stream().filter(e -> e.startsWith("released:"))).hasSize(2);
    }

    @Test
    void aHandlerWhoseLeaseIsGoneHasItsWritesRolledBack() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("revoked", "k"));
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        CountDownLatch leaseLost = new CountDownLatch(1);
        JobHandler handler = (job, tx) -> {
            tx.execute("INSERT INTO worker_results VALUES (?)", job.id());
            running.countDown();
            cancelled.await();
        };
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool)
                                .observer(new WorkerEvents() {
                                    @Override
                                    public void leaseLost(Job job) {
                                        events.add("leaseLost:" + job.id());
                                        leaseLost.countDown();
                                    }
                                })
                                .build()),
                        "revoked",
                        handler)
                .build()
                .start()) {
            await(running, "handler running");
            assertThat(queue.cancel(dsl, id)).isTrue(); // e.g. an operator cancels the job meanwhile
            cancelled.countDown();
            await(leaseLost, "completion refused");
        }
        assertThat(events).contains("leaseLost:" + id);
        assertThat(queue.find(dsl, id).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
        assertThat(dsl.fetchCount(dsl.selectFrom("worker_results"))).isZero();
    }

    @Test
    void gracefulShutdownLetsRunningHandlersFinish() throws Exception {
        queue.enqueue(dsl, NewJob.of("graceful", "k"));
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Recorder recorder = new Recorder(1);
        JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool).observer(recorder).build()), "graceful", (job, tx) -> {
                            started.countDown();
                            finish.await();
                            tx.execute("INSERT INTO worker_results VALUES (?)", job.id());
                        })
                .shutdownGrace(Duration.ofSeconds(20))
                .build()
                .start();
        await(started, "handler running");
        Thread closer = new Thread(worker::close);
        closer.start();
        // release the handler only once close() is waiting for it (awaitTermination is a timed wait)
        // close() passes through shorter timed waits first (stopping the claimer, the listener):
        // the state must hold over two looks 50 ms apart (in one CI run on JDK 25 a single look
        // caught one of those, and the assertion after it found the thread running again)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        boolean waiting = false;
        while (!waiting && System.nanoTime() < deadline) {
            if (closer.getState() == Thread.State.TIMED_WAITING) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
                waiting = closer.getState() == Thread.State.TIMED_WAITING;
            } else {
                Thread.onSpinWait();
            }
        }
        assertThat(waiting).as("close() waits for the running handler").isTrue();
        assertThat(recorder.completed.getCount()).isEqualTo(1);
        finish.countDown();
        closer.join(30_000);
        assertThat(closer.isAlive()).isFalse();
        assertThat(recorder.completed.getCount()).isZero();
        assertThat(dsl.fetchCount(JOBS)).isZero();
        assertThat(dsl.fetchCount(dsl.selectFrom("worker_results"))).isEqualTo(1);
    }
}

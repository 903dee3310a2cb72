package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Backoff;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/**
 * What every worker promises, whatever its mode, run against each of the three
 * ({@link LeasedWorkerContractTest}, {@link TransactionalWorkerContractTest},
 * {@link TwoPhaseWorkerContractTest}): each job runs, its handler's writes commit with it, and it
 * counts its attempt as the first; a poison job fails for good after its attempts while the others
 * complete; a handler's control decides its job's fate; a NOTIFY wakes an idle worker long before
 * its poll interval; {@code close()} gives back (or, for two-phase, finishes) what it could not
 * finish, and a handler that ignores its interrupt keeps its job to itself; the handler runs with
 * the job's keys in the MDC. The subclasses say how their mode builds a worker.
 */
abstract class WorkerContractTest extends DatabaseTest {

    static final JobQueueConfig CONFIG = JobQueueConfig.builder()
            .keepCompleted(true)
            .retryBackoff(new Backoff(Duration.ofMillis(1), Duration.ofMillis(1), 1.0, 0.0))
            .build();

    static final Duration WAIT = Duration.ofSeconds(60);

    /** The work a test gives a worker: run for each job, in the job's transaction. */
    @FunctionalInterface
    interface Work {
        void run(Job job, DSLContext tx) throws Exception;
    }

    /** The worker under test's LISTEN connection is up (one per test: the class's instance is shared). */
    CountDownLatch listening;

    JobQueue queue;

    /** A worker of this mode on {@code queue}, not started, with the settings a test gives. */
    abstract Worker worker(JobQueue queue, String name, Work work, Duration pollInterval, Duration grace);

    /** Whether this mode's {@code close()} interrupts a handler (two-phase lets it finish). */
    boolean closeInterrupts() {
        return true;
    }

    /** Whether a job whose handler ended is kept as {@code done} (two-phase completion deletes it). */
    @BeforeEach
    void freshQueue() {
        CountDownLatch up = new CountDownLatch(1);
        listening = up;
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_HISTORY).execute();
        dsl.execute("DROP TABLE IF EXISTS contract_runs");
        dsl.execute("CREATE TABLE contract_runs (job_id bigint NOT NULL, attempt int NOT NULL)");
        Locksmith locksmith = Locksmith.builder(pool)
                .observer(new WorkerEvents() {
                    @Override
                    public void listening() {
                        up.countDown();
                    }
                })
                .build();
        queue = new JobQueue(locksmith, CONFIG);
    }

    @Test
    void everyJobRunsOnceCountsItsFirstAttemptAndItsWritesCommitWithIt() throws Exception {
        List<Long> ids = queue.enqueueAll(dsl, Collections.nCopies(60, NewJob.of("contract", "run")));
        try (Worker worker = worker(queue, "contract", Runs::record, Duration.ofMillis(200), Duration.ofSeconds(5))
                .start()) {
            Await.until("every job finished", WAIT, () -> live("contract") == 0);
            Await.until("every job counted", WAIT, () -> worker.processed() == 60);
        }
        assertThat(runsByJob())
                .containsOnlyKeys(ids)
                .allSatisfy((id, attempts) -> assertThat(attempts).containsExactly(1));
        // keepCompleted: every mode moves its completed jobs into the history
        assertThat(dsl.fetchCount(JOBS)).isZero();
        assertThat(dsl.fetchCount(JOB_HISTORY, JOB_HISTORY.STATUS.eq("done"))).isEqualTo(60);
    }

    @Test
    void aPoisonJobFailsForGoodAfterItsAttemptsAndTheOthersComplete() throws Exception {
        long poison = queue.enqueue(
                dsl, NewJob.builder("poison", "bad").maxAttempts(3).build());
        List<Long> good = queue.enqueueAll(dsl, Collections.nCopies(10, NewJob.of("poison", "good")));
        List<Integer> poisonAttempts = new CopyOnWriteArrayList<>();
        Work work = (job, tx) -> {
            Runs.record(job, tx);
            if (job.kind().equals("bad")) {
                poisonAttempts.add(job.attempts());
                throw new IllegalStateException("poison " + job.id());
            }
        };
        try (Worker worker = worker(queue, "poison", work, Duration.ofMillis(100), Duration.ofSeconds(5))
                .start()) {
            Await.until(
                    "the poison job failed for good", WAIT, () -> status(poison).equals("failed"));
            Await.until("every good job finished", WAIT, () -> live("poison") == 0);
        }
        // Each attempt the job made, in order; a transactional worker may also meet it again at the
        // same attempt in a batch that rolled back, which counts no attempt.
        assertThat(new ArrayList<>(new LinkedHashSet<>(poisonAttempts))).containsExactly(1, 2, 3);
        Job failed = queue.find(dsl, poison).orElseThrow();
        assertThat(failed.attempts()).isEqualTo(3);
        assertThat(failed.lastError()).contains("poison " + poison);
        // the poison job's writes rolled back every time; each good job's committed once
        assertThat(runsByJob()).containsOnlyKeys(good);
    }

    @Test
    void aHandlersControlDecidesTheJobsFate() throws Exception {
        long cancelled = queue.enqueue(dsl, NewJob.of("control", "cancel"));
        long failed = queue.enqueue(dsl, NewJob.of("control", "fail"));
        long plain = queue.enqueue(dsl, NewJob.of("control", "plain"));
        Work work = (job, tx) -> {
            switch (job.kind()) {
                case "cancel" -> throw JobControl.cancel("no longer wanted");
                case "fail" -> throw JobControl.failPermanently("cannot ever work");
                default -> Runs.record(job, tx);
            }
        };
        try (Worker worker = worker(queue, "control", work, Duration.ofMillis(100), Duration.ofSeconds(5))
                .start()) {
            Await.until("every job settled", WAIT, () -> live("control") == 0);
        }
        assertThat(queue.find(dsl, cancelled).orElseThrow().status().dbValue()).isEqualTo("cancelled");
        assertThat(queue.find(dsl, cancelled).orElseThrow().lastError()).isEqualTo("no longer wanted");
        Job failedJob = queue.find(dsl, failed).orElseThrow();
        assertThat(failedJob.status().dbValue()).isEqualTo("failed");
        assertThat(failedJob.attempts()).isEqualTo(1);
        assertThat(failedJob.lastError()).isEqualTo("cannot ever work");
        assertThat(runsByJob()).containsOnlyKeys(plain);
    }

    @Test
    void aNotifyWakesAnIdleWorkerLongBeforeItsPollInterval() throws Exception {
        Duration poll = Duration.ofMinutes(10);
        try (Worker worker =
                worker(queue, "wake", Runs::record, poll, Duration.ofSeconds(5)).start()) {
            assertThat(listening.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("the worker's LISTEN connection came up")
                    .isTrue();
            long id = queue.enqueue(dsl, NewJob.of("wake", "run"));
            // Polling alone would take ten minutes: only the NOTIFY can bring the job in a minute.
            Await.until("the job ran", WAIT, () -> runsByJob().containsKey(id));
        }
    }

    @Test
    void closeGivesBackWhatItsHandlersDidNotFinish() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("stop", "slow"));
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Work work = (job, tx) -> {
            started.countDown();
            // ends early when interrupted, as a well-behaved handler does
            release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            Runs.record(job, tx);
        };
        Worker worker = worker(queue, "stop", work, Duration.ofMillis(100), Duration.ofMillis(300))
                .start();
        assertThat(started.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        worker.close();
        release.countDown();
        Await.until("no thread of the worker runs", WAIT, () -> worker.liveThreads() == 0);
        assertThat(dsl.fetchCount(JOBS, JOBS.STATUS.eq("running"))).isZero();
        if (closeInterrupts()) {
            // interrupted: the job is back, its attempt not counted, and its writes never happened
            Job back = queue.find(dsl, id).orElseThrow();
            assertThat(back.status().dbValue()).isEqualTo("pending");
            assertThat(back.attempts()).isZero();
            assertThat(runsByJob()).isEmpty();
        } else {
            // not interrupted: the thread finished its job once it was let through
            Await.until("the job finished", WAIT, () -> runsByJob().containsKey(id));
            assertThat(runsByJob().get(id)).containsExactly(1);
        }
    }

    @Test
    void aHandlerThatIgnoresItsInterruptKeepsItsJobToItselfUntilItEnds() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("stubborn", "slow"));
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean release = new AtomicBoolean();
        Work work = (job, tx) -> {
            started.countDown();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!release.get() && System.nanoTime() < deadline) {
                Thread.onSpinWait(); // ignores interrupts
            }
            Runs.record(job, tx);
        };
        Worker worker = worker(queue, "stubborn", work, Duration.ofMillis(100), Duration.ofMillis(300))
                .start();
        assertThat(started.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        worker.close();
        assertThat(worker.liveThreads())
                .as("close() reports the handler it could not stop")
                .isEqualTo(1);
        // While the handler still runs, no claim of any mode can take its job.
        List<Job> taken = dsl.transactionResult(c -> queue.claimInTransaction(c.dsl(), "stubborn", 10));
        assertThat(taken).isEmpty();
        assertThat(queue.claim("stubborn", 10, Duration.ofSeconds(30), "another"))
                .isEmpty();
        stillHeldWhileStuck(id);
        release.set(true);
        Await.until("the handler ended", WAIT, () -> worker.liveThreads() == 0);
        Await.until("its job finished", WAIT, () -> runsByJob().containsKey(id) && live("stubborn") == 0);
        assertThat(runsByJob().get(id)).as("it ran once").containsExactly(1);
    }

    /** More a mode proves while a stubborn handler outlives close(); nothing by default. */
    void stillHeldWhileStuck(long id) throws Exception {}

    @Test
    void theHandlerRunsWithTheJobsKeysInTheMdc() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("mdc", "traced"));
        Map<String, String> seen = new ConcurrentHashMap<>();
        Work work = (job, tx) -> {
            Map<String, String> mdc = MDC.getCopyOfContextMap();
            if (mdc != null) {
                seen.putAll(mdc);
            }
            Runs.record(job, tx);
        };
        try (Worker worker = worker(queue, "mdc", work, Duration.ofMillis(100), Duration.ofSeconds(5))
                .start()) {
            Await.until("the job ran", WAIT, () -> runsByJob().containsKey(id));
        }
        assertThat(seen)
                .containsEntry("locksmith.job.id", Long.toString(id))
                .containsEntry("locksmith.job.queue", "mdc")
                .containsEntry("locksmith.job.kind", "traced")
                .containsEntry("locksmith.job.attempt", "1");
    }

    // ------------------------------------------------------------------ helpers

    /** What handlers write: one row per run, in the job's transaction. */
    static final class Runs {
        private Runs() {}

        static void record(Job job, DSLContext tx) {
            tx.execute("INSERT INTO contract_runs VALUES (?, ?)", job.id(), job.attempts());
        }
    }

    /** The committed runs: job id to the attempt numbers its handler saw, in order. */
    Map<Long, List<Integer>> runsByJob() {
        Map<Long, List<Integer>> runs = new ConcurrentHashMap<>();
        dsl.fetch("SELECT job_id, attempt FROM contract_runs ORDER BY attempt")
                .forEach(r -> runs.computeIfAbsent(r.get(0, Long.class), k -> new ArrayList<>())
                        .add(r.get(1, Integer.class)));
        return runs;
    }

    int live(String queueName) {
        return dsl.fetchCount(JOBS, JOBS.QUEUE.eq(queueName).and(JOBS.STATUS.in("pending", "running")));
    }

    String status(long id) {
        return dsl.select(JOBS.STATUS)
                .from(JOBS)
                .where(JOBS.ID.eq(id))
                .unionAll(DSL.select(JOB_HISTORY.STATUS).from(JOB_HISTORY).where(JOB_HISTORY.ID.eq(id)))
                .fetchOptional(JOBS.STATUS)
                .orElse("gone");
    }
}

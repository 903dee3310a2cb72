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
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import org.slf4j.event.Level;

/**
 * What the workers log about a failing handler: once per failure, with the stack trace, at the
 * worker's level while the job will be retried and at ERROR when it failed for good, under MDC
 * keys that name the job. This module's SLF4J binding (slf4j-simple, INFO) writes to standard
 * error as it is at each write, so capturing standard error captures the log lines.
 */
class WorkerLoggingTest extends DatabaseTest {

    private static final JobQueueConfig FAST_RETRY = JobQueueConfig.builder()
            .retryBackoff(new Backoff(Duration.ofMillis(1), Duration.ofMillis(1), 1.0, 0.0))
            .build();

    private JobQueue queue;
    private final List<Map<String, String>> seenMdc = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(dsl);
        seenMdc.clear();
    }

    private JobHandler exploding() {
        return (job, tx) -> {
            seenMdc.add(MDC.getCopyOfContextMap());
            throw new IllegalStateException("boom on attempt " + job.attempts());
        };
    }

    @Test
    void aFailingHandlerIsLoggedOncePerAttemptWithItsStackTraceAndTheJobInTheMdc() throws Exception {
        long id =
                queue.enqueue(dsl, NewJob.builder("logq", "mail").maxAttempts(2).build());
        String err = runUntilFailedForGood("logq", Level.WARN);

        List<String> lines = logLines(err, "dev.locksmith.jobs.JobWorker");
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0))
                .contains("WARN dev.locksmith.jobs.JobWorker - job " + id
                        + " (mail) of queue logq failed, attempt 1 of 2; retrying at");
        assertThat(lines.get(1))
                .contains("ERROR dev.locksmith.jobs.JobWorker - job " + id
                        + " (mail) of queue logq failed for good after 2 attempts");
        assertThat(err)
                .contains("java.lang.IllegalStateException: boom on attempt 1")
                .contains("java.lang.IllegalStateException: boom on attempt 2")
                .contains("\tat dev.locksmith.it.jobs.WorkerLoggingTest");
        assertThat(seenMdc).containsExactly(mdcOf(id, "logq", 1), mdcOf(id, "logq", 2));

        Job failed = queue.find(dsl, id).orElseThrow();
        assertThat(failed.lastError())
                .startsWith("java.lang.IllegalStateException: boom on attempt 2")
                .contains("\tat dev.locksmith.it.jobs.WorkerLoggingTest");
    }

    @Test
    void theRetryLevelIsTheWorkersChoiceAndFailingForGoodIsAlwaysAnError() throws Exception {
        long id = queue.enqueue(
                dsl, NewJob.builder("quiet", "mail").maxAttempts(2).build());
        String err = runUntilFailedForGood("quiet", Level.DEBUG);
        assertThat(logLines(err, "dev.locksmith.jobs.JobWorker"))
                .singleElement()
                .asString()
                .contains("ERROR dev.locksmith.jobs.JobWorker - job " + id + " (mail) of queue quiet failed "
                        + "for good after 2 attempts");
    }

    @Test
    void theTransactionalWorkerLogsAnIsolatedFailureTheSameWay() throws Exception {
        long id = queue.enqueue(
                dsl, NewJob.builder("txlog", "mail").maxAttempts(5).build());
        CountDownLatch oneFailure = new CountDownLatch(1);
        String err = capturingStandardError(() -> {
            try (TransactionalWorker worker = TransactionalWorker.builder(
                            new JobQueue(
                                    Locksmith.of(pool),
                                    JobQueueConfig.builder()
                                            .retryBackoff(
                                                    new Backoff(Duration.ofHours(1), Duration.ofHours(1), 1.0, 0.0))
                                            .build()),
                            "txlog",
                            (jobs, tx) -> {
                                seenMdc.add(MDC.getCopyOfContextMap());
                                oneFailure.countDown();
                                throw new IllegalStateException("boom in a batch of " + jobs.size());
                            })
                    .threads(1)
                    .listen(false)
                    .isolateEachJob(true)
                    .pollInterval(Duration.ofMillis(20))
                    .build()
                    .start()) {
                await(oneFailure);
                // close() (leaving this block) joins the worker thread, which first finishes the
                // batch: the failure is logged and committed before standard error is restored
            }
        });
        assertThat(logLines(err, "dev.locksmith.jobs.TransactionalWorker"))
                .singleElement()
                .asString()
                .contains("WARN dev.locksmith.jobs.TransactionalWorker - job " + id
                        + " (mail) of queue txlog failed, attempt 1 of 5; retrying at");
        assertThat(err).contains("java.lang.IllegalStateException: boom in a batch of 1");
        assertThat(seenMdc).containsExactly(mdcOf(id, "txlog", 1));
    }

    /** Runs a one-thread JobWorker on {@code queueName} until its only job failed for good; returns standard error. */
    private String runUntilFailedForGood(String queueName, Level retryLevel) throws Exception {
        CountDownLatch failedForGood = new CountDownLatch(1);
        return capturingStandardError(() -> {
            try (JobWorker worker = JobWorker.builder(
                            new JobQueue(
                                    Locksmith.builder(pool)
                                            .observer(failedForGood(failedForGood))
                                            .build(),
                                    FAST_RETRY),
                            queueName,
                            exploding())
                    .threads(1)
                    .listen(false)
                    .pollInterval(Duration.ofMillis(20))
                    .handlerFailureLogLevel(retryLevel)
                    .build()
                    .start()) {
                await(failedForGood);
            }
        });
    }

    private static Map<String, String> mdcOf(long id, String queueName, int attempt) {
        return Map.of(
                "locksmith.job.id",
                Long.toString(id),
                "locksmith.job.queue",
                queueName,
                "locksmith.job.kind",
                "mail",
                "locksmith.job.attempt",
                Integer.toString(attempt));
    }

    /**
     * The log lines about jobs (not the stack trace lines that follow them) of {@code logger}:
     * a worker also logs at start, e.g. that autovacuum is off (as on this machine's service).
     */
    private static List<String> logLines(String err, String logger) {
        return err.lines()
                .filter(l -> l.startsWith("[") && l.contains(" " + logger + " - job "))
                .toList();
    }

    private static WorkerEvents failedForGood(CountDownLatch latch) {
        return new WorkerEvents() {
            @Override
            public void failed(Job job, FailResult.Outcome outcome) {
                if (outcome == FailResult.Outcome.FAILED) {
                    latch.countDown();
                }
            }
        };
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static String capturingStandardError(ThrowingRunnable work) throws Exception {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            work.run();
        } finally {
            System.setErr(err);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        err.print(text);
        return text;
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}

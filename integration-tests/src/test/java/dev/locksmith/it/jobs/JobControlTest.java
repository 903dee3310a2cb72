package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.codegen.tables.records.JobsRecord;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.KeyedRuns;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.BatchJobHandler;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A handler's {@link JobControl}s (snooze, retry after a delay of its choosing, fail permanently,
 * cancel) with both workers on real connections, each observed in the {@code jobs} table
 * afterwards: status, attempts, {@code run_at} on the database clock, {@code last_error}, and the
 * handler's own writes rolled back.
 */
class JobControlTest extends DatabaseTest {

    private static final Duration SNOOZE = Duration.ofHours(1);
    private static final Duration CUSTOM_BACKOFF = Duration.ofHours(5);
    private static final List<String> CONTROL_KINDS = List.of("snooze", "retry", "fail", "cancel", "wrapped");

    private JobQueue queue;

    @Override
    protected int poolSize() {
        return 30;
    }

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        dsl.execute("DROP TABLE IF EXISTS control_writes");
        dsl.execute("CREATE TABLE control_writes (job_id bigint NOT NULL)");
        queue = new JobQueue(dsl);
    }

    /** Writes a row in the job's transaction, then does what the job's kind says. */
    private static void controlled(Job job, DSLContext tx) {
        tx.execute("INSERT INTO control_writes VALUES (?)", job.id());
        switch (job.kind()) {
            case "snooze" -> throw JobControl.snooze(SNOOZE);
            case "retry" -> throw JobControl.retryAfter(CUSTOM_BACKOFF, "provider said 429");
            case "fail" -> throw JobControl.failPermanently("rejected: no such address");
            case "cancel" -> throw JobControl.cancel("recipient deleted");
            // a framework between the handler and the worker wrapped it
            case "wrapped" -> throw new IllegalStateException("wrapper", JobControl.cancel("wrapped cancel"));
            default -> {}
        }
    }

    /** One job of each control kind and three that complete, max_attempts 5; ids by kind. */
    private Map<String, Long> enqueueOneOfEach(String queueName) {
        Map<String, Long> ids = new LinkedHashMap<>();
        for (String kind : CONTROL_KINDS) {
            ids.put(
                    kind,
                    queue.enqueue(
                            dsl, NewJob.builder(queueName, kind).maxAttempts(5).build()));
        }
        for (int i = 0; i < 3; i++) {
            ids.put(
                    "ok" + i,
                    queue.enqueue(
                            dsl, NewJob.builder(queueName, "ok").maxAttempts(5).build()));
        }
        return ids;
    }

    @Test
    void leasedWorkerAppliesEachControlAndRollsBackTheHandlersWrites() throws Exception {
        Map<String, Long> ids = enqueueOneOfEach("leased-control");
        Map<Long, FailResult.Outcome> outcomes = new ConcurrentHashMap<>();
        CountDownLatch settled = new CountDownLatch(ids.size());
        WorkerEvents listener = new WorkerEvents() {
            @Override
            public void completed(Job job) {
                settled.countDown();
            }

            @Override
            public void failed(Job job, FailResult.Outcome outcome) {
                outcomes.put(job.id(), outcome);
                settled.countDown();
            }
        };
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool).observer(listener).build()),
                        "leased-control",
                        JobControlTest::controlled)
                .threads(4)
                .build()
                .start()) {
            assertThat(settled.await(30, TimeUnit.SECONDS))
                    .as("every job completed or controlled")
                    .isTrue();
        }

        assertThat(outcomes)
                .containsEntry(ids.get("snooze"), FailResult.Outcome.SNOOZED)
                .containsEntry(ids.get("retry"), FailResult.Outcome.RETRY_SCHEDULED)
                .containsEntry(ids.get("fail"), FailResult.Outcome.FAILED)
                .containsEntry(ids.get("cancel"), FailResult.Outcome.CANCELLED)
                .containsEntry(ids.get("wrapped"), FailResult.Outcome.CANCELLED)
                .hasSize(5);
        // the leased claim counted an attempt; a snooze gives it back
        assertControlledRows(ids, 0);
    }

    @Test
    void transactionalWorkerAppliesEachControlAfterIsolatingTheBatch() throws Exception {
        Map<String, Long> ids = enqueueOneOfEach("tx-control");
        Map<Long, AtomicInteger> handledAlone = new ConcurrentHashMap<>();
        CountDownLatch eachHandledAlone = new CountDownLatch(ids.size());
        AtomicInteger wholeBatches = new AtomicInteger();
        BatchJobHandler handler = (jobs, tx) -> {
            if (jobs.size() > 1) {
                wholeBatches.incrementAndGet();
            }
            for (Job job : jobs) {
                if (jobs.size() == 1
                        && handledAlone
                                        .computeIfAbsent(job.id(), id -> new AtomicInteger())
                                        .incrementAndGet()
                                == 1) {
                    eachHandledAlone.countDown();
                }
                controlled(job, tx);
            }
        };
        try (TransactionalWorker worker = TransactionalWorker.builder(pool, "tx-control", handler)
                .threads(1)
                .batchSize(10)
                .build()
                .start()) {
            assertThat(eachHandledAlone.await(30, TimeUnit.SECONDS))
                    .as("every job handed to the handler alone")
                    .isTrue();
        } // close() joins the thread, which commits its batch first

        // the whole batch met a control and rolled back; then each job went alone, once
        assertThat(wholeBatches).hasValue(1);
        assertThat(handledAlone.values()).allSatisfy(n -> assertThat(n).hasValue(1));
        // a transactional claim counts no attempt until it fails; a snooze counts none at all
        assertControlledRows(ids, 0);
    }

    /** What both workers leave: the rows as each control asks, the completed jobs gone. */
    private void assertControlledRows(Map<String, Long> ids, int snoozedAttempts) {
        JobsRecord snoozed = row(ids.get("snooze"));
        assertThat(snoozed.getStatus()).isEqualTo("pending");
        assertThat(snoozed.getAttempts()).isEqualTo(snoozedAttempts);
        assertThat(snoozed.getLastError()).isNull();
        assertThat(snoozed.getLockedBy()).isNull();
        assertThat(dueIn(ids.get("snooze"))).isBetween(SNOOZE.minusMinutes(1), SNOOZE);

        JobsRecord retried = row(ids.get("retry"));
        assertThat(retried.getStatus()).isEqualTo("pending");
        assertThat(retried.getAttempts()).isEqualTo(1);
        assertThat(retried.getLastError()).isEqualTo("provider said 429");
        // the handler's delay, not the queue's backoff (seconds for a first attempt)
        assertThat(dueIn(ids.get("retry"))).isBetween(CUSTOM_BACKOFF.minusMinutes(1), CUSTOM_BACKOFF);

        JobsRecord failed = row(ids.get("fail"));
        assertThat(failed.getStatus()).isEqualTo("failed");
        assertThat(failed.getAttempts()).as("four attempts were left").isEqualTo(1);
        assertThat(failed.getFinishedAt()).isNotNull();
        assertThat(failed.getLastError()).isEqualTo("rejected: no such address");

        JobsRecord cancelled = row(ids.get("cancel"));
        assertThat(cancelled.getStatus()).isEqualTo("cancelled");
        assertThat(cancelled.getFinishedAt()).isNotNull();
        assertThat(cancelled.getLastError()).isEqualTo("recipient deleted");
        assertThat(row(ids.get("wrapped")).getStatus()).isEqualTo("cancelled");
        assertThat(row(ids.get("wrapped")).getLastError()).isEqualTo("wrapped cancel");

        for (int i = 0; i < 3; i++) {
            assertThat(dsl.fetchExists(JOBS, JOBS.ID.eq(ids.get("ok" + i))))
                    .as("completed job removed")
                    .isFalse();
        }
        // only the completed jobs' handler writes committed
        List<Long> written =
                dsl.fetch("SELECT job_id FROM control_writes ORDER BY job_id").getValues(0, Long.class);
        assertThat(written).containsExactly(ids.get("ok0"), ids.get("ok1"), ids.get("ok2"));
    }

    /** The job's row in jobs, or, once finished, in job_history (as a jobs row without a lease). */
    private JobsRecord row(long id) {
        JobsRecord live = dsl.fetchOne(JOBS, JOBS.ID.eq(id));
        return live != null
                ? live
                : dsl.fetchSingle(JOB_HISTORY, JOB_HISTORY.ID.eq(id)).into(JOBS);
    }

    /** How long until the job is due, on the database clock. */
    private Duration dueIn(long id) {
        double seconds = dsl.select(
                        DSL.field("extract(epoch FROM {0} - statement_timestamp())", Double.class, JOBS.RUN_AT))
                .from(JOBS)
                .where(JOBS.ID.eq(id))
                .fetchSingle()
                .value1();
        return Duration.ofMillis(Math.round(seconds * 1000));
    }

    @Test
    void snoozingNeverUsesUpAttempts() throws Exception {
        long leased = queue.enqueue(
                dsl, NewJob.builder("snooze-leased", "s").maxAttempts(2).build());
        long transactional = queue.enqueue(
                dsl, NewJob.builder("snooze-tx", "s").maxAttempts(2).build());
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        CountDownLatch done = new CountDownLatch(2);
        // snoozed four times (twice max_attempts) without delay, then completed
        JobHandler handler = (job, tx) -> {
            int run = runs.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
            if (run <= 4) {
                throw JobControl.snooze(Duration.ZERO);
            }
            tx.execute("INSERT INTO control_writes VALUES (?)", job.id());
            done.countDown();
        };
        try (JobWorker leasedWorker = JobWorker.builder(pool, "snooze-leased", handler)
                        .build()
                        .start();
                TransactionalWorker txWorker = TransactionalWorker.builder(
                                pool, "snooze-tx", (jobs, tx) -> handler.handle(jobs.get(0), tx))
                        .batchSize(1)
                        .build()
                        .start()) {
            assertThat(done.await(30, TimeUnit.SECONDS))
                    .as("both jobs completed")
                    .isTrue();
        }
        assertThat(runs.get(leased)).hasValue(5);
        assertThat(runs.get(transactional)).hasValue(5);
        assertThat(dsl.fetchCount(JOBS)).as("both completed, neither failed").isZero();
        assertThat(dsl.fetch("SELECT job_id FROM control_writes ORDER BY job_id")
                        .getValues(0, Long.class))
                .containsExactly(leased, transactional);
    }

    @Test
    void aRetryOnTheLastAttemptFailsTheJob() {
        long id = queue.enqueue(dsl, NewJob.builder("last", "k").maxAttempts(1).build());
        Job job = queue.claim("last", 1, Duration.ofMinutes(1), "me").get(0);

        FailResult result = dsl.transactionResult(
                c -> queue.settle(c.dsl(), job, JobControl.retryAfter(Duration.ofMinutes(1), "still down")));

        assertThat(result.outcome()).isEqualTo(FailResult.Outcome.FAILED);
        assertThat(row(id).getStatus()).isEqualTo("failed");
        assertThat(row(id).getLastError()).isEqualTo("still down");
    }

    @Test
    void settlingAJobWhoseLeaseIsGoneChangesNothing() {
        long id = queue.enqueue(dsl, NewJob.builder("gone", "k").build());
        Job job = queue.claim("gone", 1, Duration.ofMinutes(1), "me").get(0);
        assertThat(queue.cancel(dsl, id)).isTrue();

        FailResult result = dsl.transactionResult(c -> queue.settle(c.dsl(), job, JobControl.snooze(Duration.ZERO)));

        assertThat(result.outcome()).isEqualTo(FailResult.Outcome.LEASE_LOST);
        assertThat(row(id).getStatus()).isEqualTo("cancelled");
        assertThat(row(id).getLastError()).isNull();
    }

    @Test
    void controlsRefuseNegativeDelaysAndNullReasons() {
        assertThatThrownBy(() -> JobControl.snooze(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delay");
        assertThatThrownBy(() -> JobControl.retryAfter(Duration.ofSeconds(-1), "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delay");
        assertThatThrownBy(() -> JobControl.cancel(null)).isInstanceOf(NullPointerException.class);
        JobControl control = JobControl.retryAfter(Duration.ofSeconds(3), new IllegalStateException("boom"));
        assertThat(control.action()).isEqualTo(JobControl.Action.RETRY);
        assertThat(control.delay()).isEqualTo(Duration.ofSeconds(3));
        assertThat(control.reason())
                .startsWith("java.lang.IllegalStateException: boom")
                .contains("\tat ");
    }

    /**
     * 10 keys x 20 jobs under four threads of each worker; every job snoozes (no delay) the first
     * time it runs. Each job still completes exactly once, and a snoozed job keeps its key's order:
     * no successor runs before it completed.
     */
    @Test
    void snoozedKeyedJobsKeepTheirKeysOrderUnderConcurrentWorkers() throws Exception {
        for (String mode : List.of("leased", "transactional")) {
            dsl.deleteFrom(JOBS).execute();
            String queueName = "keyed-snooze-" + mode;
            List<NewJob> jobs = KeyedRuns.interleaved(queueName, 10, 20, 7);
            Map<Long, String> enqueued = new LinkedHashMap<>();
            List<Long> ids = queue.enqueueAll(dsl, jobs);
            for (int i = 0; i < ids.size(); i++) {
                enqueued.put(ids.get(i), jobs.get(i).orderingKey().orElseThrow());
            }
            KeyedRuns runs = new KeyedRuns();
            Map<Long, AtomicInteger> seen = new ConcurrentHashMap<>();
            CountDownLatch completed = new CountDownLatch(ids.size());
            JobHandler handler = (job, tx) -> {
                if (seen.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet() == 1) {
                    throw JobControl.snooze(Duration.ZERO);
                }
                long start = runs.started();
                tx.execute("INSERT INTO control_writes VALUES (?)", job.id());
                runs.ended(job.id(), enqueued.get(job.id()), start);
                completed.countDown();
            };
            AutoCloseable worker = mode.equals("leased")
                    ? JobWorker.builder(pool, queueName, handler)
                            .threads(4)
                            .build()
                            .start()
                    : TransactionalWorker.builder(pool, queueName, (batch, tx) -> {
                                for (Job job : batch) {
                                    handler.handle(job, tx);
                                }
                            })
                            .threads(4)
                            .batchSize(5)
                            .isolateEachJob(true)
                            .build()
                            .start();
            try (worker) {
                assertThat(completed.await(60, TimeUnit.SECONDS))
                        .as(mode + ": every job completed")
                        .isTrue();
            }
            assertThat(runs.violations(enqueued)).as(mode).isEmpty();
            assertThat(seen.values())
                    .as(mode + ": each job ran twice")
                    .allSatisfy(n -> assertThat(n).hasValue(2));
            assertThat(dsl.fetchCount(JOBS)).as(mode).isZero();
            List<Long> written =
                    new ArrayList<>(dsl.fetch("SELECT job_id FROM control_writes WHERE job_id = ANY(?)", (Object)
                                    ids.toArray(Long[]::new))
                            .getValues(0, Long.class));
            assertThat(written)
                    .as(mode + ": one write per job")
                    .hasSize(ids.size())
                    .doesNotHaveDuplicates();
        }
    }
}

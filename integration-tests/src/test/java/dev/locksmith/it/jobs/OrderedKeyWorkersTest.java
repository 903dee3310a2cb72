package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.KeyedRuns;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * 100 keys x 50 jobs, enqueued in one random interleaving, worked by 8 threads on real
 * connections: every key's jobs must run one at a time, in enqueue order, and every job exactly
 * once ({@link KeyedRuns}). With the workers of both modes and with bare claims on threads; and
 * the same check against a claim that ignores keys (the statement as it was before ordering keys),
 * which must fail it, so that the check is known to catch what it is for.
 */
class OrderedKeyWorkersTest extends DatabaseTest {

    static final int KEYS = 100;
    static final int PER_KEY = 50;
    static final int JOBS_COUNT = KEYS * PER_KEY;
    static final int THREADS = 8;

    /** The claimable jobs as the claim chose them before ordering keys: keys ignored. */
    static final String NAIVE_CLAIMABLE = "SELECT id FROM locksmith.jobs WHERE queue = ? AND status = 'pending' "
            + "AND run_at <= statement_timestamp() ORDER BY priority, run_at, id LIMIT ? FOR UPDATE SKIP LOCKED";

    private JobQueue queue;
    private KeyedRuns runs;
    private Map<Long, String> enqueued;

    @Override
    protected int poolSize() {
        return 40;
    }

    @BeforeEach
    void fiveThousandKeyedJobs() {
        dsl.deleteFrom(JOBS).execute();
        dsl.execute("DROP TABLE IF EXISTS keyed_results");
        dsl.execute("CREATE TABLE keyed_results (job_id bigint NOT NULL, key text NOT NULL)");
        queue = new JobQueue(dsl);
        runs = new KeyedRuns();
        List<NewJob> jobs = KeyedRuns.interleaved("keyed", KEYS, PER_KEY, 16);
        enqueued = new LinkedHashMap<>();
        for (int from = 0; from < jobs.size(); from += 500) {
            List<NewJob> batch = jobs.subList(from, from + 500);
            List<Long> ids = queue.enqueueAll(dsl, batch);
            for (int i = 0; i < ids.size(); i++) {
                enqueued.put(ids.get(i), batch.get(i).orderingKey().orElseThrow());
            }
        }
        assertThat(enqueued).hasSize(JOBS_COUNT);
    }

    /** The handler's work: a row written in the job's transaction, between the two stamps. */
    private void handle(DSLContext tx, long jobId, String key) {
        long start = runs.started();
        tx.execute("INSERT INTO keyed_results (job_id, key) VALUES (?, ?)", jobId, key);
        runs.ended(jobId, key, start);
    }

    private void report(String what, long startNanos) {
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        System.out.printf(
                "%s: %d jobs of %d keys on %d threads in %.2f s, %.0f jobs/s%n",
                what, JOBS_COUNT, KEYS, THREADS, seconds, JOBS_COUNT / seconds);
    }

    private void assertEveryKeyRanInOrderOneAtATime() {
        assertThat(runs.violations(enqueued)).isEmpty();
        assertThat(runs.runs()).hasSize(JOBS_COUNT);
        assertThat(dsl.fetchCount(dsl.selectFrom("keyed_results"))).isEqualTo(JOBS_COUNT);
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void jobWorkersRunEachKeysJobsOneAtATimeInEnqueueOrder() throws Exception {
        CountDownLatch completed = new CountDownLatch(JOBS_COUNT);
        WorkerEvents counting = new WorkerEvents() {
            @Override
            public void completed(Job job) {
                completed.countDown();
            }
        };
        List<JobWorker> workers = new ArrayList<>();
        long start = System.nanoTime();
        try {
            // 4 workers of 2 threads: four claimers racing for the same heads
            for (int w = 0; w < THREADS / 2; w++) {
                workers.add(JobWorker.builder(
                                new JobQueue(Locksmith.builder(pool)
                                        .observer(counting)
                                        .build()),
                                "keyed",
                                (job, tx) -> handle(tx, job.id(), job.orderingKey()))
                        .threads(2)
                        .pollInterval(Duration.ofMillis(50))
                        .build()
                        .start());
            }
            assertThat(completed.await(120, TimeUnit.SECONDS)).isTrue();
            report("JobWorker x4 (2 threads each)", start);
        } finally {
            workers.forEach(JobWorker::close);
        }
        assertEveryKeyRanInOrderOneAtATime();
    }

    @Test
    void transactionalWorkersRunEachKeysJobsOneAtATimeInEnqueueOrder() throws Exception {
        CountDownLatch handled = new CountDownLatch(JOBS_COUNT);
        List<TransactionalWorker> workers = new ArrayList<>();
        long start = System.nanoTime();
        try {
            for (int w = 0; w < 2; w++) {
                workers.add(TransactionalWorker.builder(pool, "keyed", (jobs, tx) -> {
                            for (Job job : jobs) {
                                handle(tx, job.id(), job.orderingKey());
                                handled.countDown();
                            }
                        })
                        .threads(THREADS / 2)
                        .batchSize(10)
                        .pollInterval(Duration.ofMillis(50))
                        .build()
                        .start());
            }
            assertThat(handled.await(120, TimeUnit.SECONDS)).isTrue();
        } finally {
            workers.forEach(TransactionalWorker::close);
        }
        report("TransactionalWorker x2 (4 threads each, batches of 10)", start);
        assertEveryKeyRanInOrderOneAtATime();
    }

    @ParameterizedTest(name = "batch of {0}")
    @ValueSource(ints = {1, 10})
    void leasedClaimsOnBareThreadsKeepEveryKeyInOrder(int batch) throws Exception {
        long start = System.nanoTime();
        Concurrently.run(THREADS, 300, thread -> {
            while (true) {
                List<Job> jobs = queue.claim("keyed", batch, Duration.ofMinutes(5), "t" + thread);
                if (jobs.isEmpty()) {
                    if (dsl.fetchCount(JOBS) == 0) {
                        return null;
                    }
                    continue; // the remaining jobs wait for their predecessors
                }
                for (Job job : jobs) {
                    dsl.transaction(c -> {
                        handle(c.dsl(), job.id(), job.orderingKey());
                        assertThat(queue.complete(c.dsl(), job)).isTrue();
                    });
                }
            }
        });
        report("leased claims, batch of " + batch, start);
        assertEveryKeyRanInOrderOneAtATime();
    }

    @Test
    void transactionalClaimsOnBareThreadsKeepEveryKeyInOrder() throws Exception {
        long start = System.nanoTime();
        Concurrently.run(THREADS, 300, thread -> {
            while (true) {
                int claimed = dsl.transactionResult(c -> {
                    List<Job> jobs = queue.claimInTransaction(c.dsl(), "keyed", 5);
                    jobs.forEach(job -> handle(c.dsl(), job.id(), job.orderingKey()));
                    return jobs.size();
                });
                if (claimed == 0 && dsl.fetchCount(JOBS) == 0) {
                    return null;
                }
            }
        });
        report("transactional claims, batch of 5", start);
        assertEveryKeyRanInOrderOneAtATime();
    }

    /** The same threads with the claim that ignores keys: the check must catch it. */
    @Test
    void aClaimThatIgnoresKeysFailsTheCheckInTransactionalMode() throws Exception {
        Concurrently.run(THREADS, 300, thread -> {
            while (true) {
                int claimed = dsl.transactionResult(c -> {
                    var jobs = c.dsl()
                            .fetch(
                                    "DELETE FROM locksmith.jobs WHERE id IN (" + NAIVE_CLAIMABLE
                                            + ") RETURNING id, ordering_key",
                                    "keyed",
                                    5);
                    for (Record job : jobs) {
                        handle(c.dsl(), job.get(0, Long.class), job.get(1, String.class));
                    }
                    return jobs.size();
                });
                if (claimed == 0 && dsl.fetchCount(JOBS) == 0) {
                    return null;
                }
            }
        });
        List<String> violations = runs.violations(enqueued);
        System.out.printf(
                "claim ignoring keys, transactional: %d violations, e.g. %s%n",
                violations.size(), violations.subList(0, Math.min(3, violations.size())));
        assertThat(violations).isNotEmpty().noneMatch(v -> v.contains(" times"));
    }

    @Test
    void aClaimThatIgnoresKeysFailsTheCheckInLeasedMode() throws Exception {
        Concurrently.run(THREADS, 300, thread -> {
            while (true) {
                var jobs = dsl.fetch(
                        "UPDATE locksmith.jobs SET status = 'running', locked_by = ?, "
                                + "locked_until = now() + interval '5 minutes', lease_id = gen_random_uuid(), "
                                + "attempts = attempts + 1 WHERE id IN (" + NAIVE_CLAIMABLE
                                + ") RETURNING id, ordering_key, lease_id",
                        "t" + thread,
                        "keyed",
                        2);
                if (jobs.isEmpty()) {
                    return null;
                }
                for (Record job : jobs) {
                    dsl.transaction(c -> {
                        handle(c.dsl(), job.get(0, Long.class), job.get(1, String.class));
                        assertThat(c.dsl()
                                        .execute(
                                                "DELETE FROM locksmith.jobs WHERE id = ? AND lease_id = ?",
                                                job.get(0, Long.class),
                                                job.get(2, UUID.class)))
                                .isEqualTo(1);
                    });
                }
            }
        });
        List<String> violations = runs.violations(enqueued);
        System.out.printf(
                "claim ignoring keys, leased: %d violations, e.g. %s%n",
                violations.size(), violations.subList(0, Math.min(3, violations.size())));
        assertThat(violations).isNotEmpty().noneMatch(v -> v.contains(" times"));
    }
}

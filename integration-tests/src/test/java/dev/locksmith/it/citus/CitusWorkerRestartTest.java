package dev.locksmith.it.citus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Await;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A worker node of the cluster stopped and started again while workers drain a queue spread
 * over every shard: the claims and commits that reach the stopped node fail, the workers go on,
 * and once the node is back every job is done; exactly once by the transactional worker (its
 * handler's writes commit with the claim), at least once by the leased one. Needs the commands
 * that stop and start the node, {@code LOCKSMITH_CITUS_STOP_WORKER} and
 * {@code LOCKSMITH_CITUS_START_WORKER} ({@code .ci/run} sets them); skipped without.
 */
class CitusWorkerRestartTest extends CitusTest {

    private static final String STOP = System.getenv("LOCKSMITH_CITUS_STOP_WORKER");
    private static final String START = System.getenv("LOCKSMITH_CITUS_START_WORKER");
    private static final int JOBS = 4_000;

    private JobQueue queue;

    @BeforeEach
    void setUp() {
        Assumptions.assumeTrue(STOP != null && START != null, "the worker node's stop/start commands are not set");
        queue = new JobQueue(dsl);
        nodeStopped = new CountDownLatch(1);
        handled = new AtomicInteger();
        dsl.execute("DELETE FROM {0}", jobs());
        dsl.execute("DROP TABLE IF EXISTS {0}", results());
        dsl.execute("CREATE TABLE {0} (job_id bigint NOT NULL)", results());
    }

    private Table<?> jobs() {
        return DSL.table(DSL.name(schema, "jobs"));
    }

    private Table<?> results() {
        return DSL.table(DSL.name(schema, "restart_results"));
    }

    private static void run(String command) throws Exception {
        Process process = new ProcessBuilder("bash", "-c", command).inheritIO().start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as(command).isTrue();
        assertThat(process.exitValue()).as(command).isZero();
    }

    /**
     * Holds the handlers after the first 200 jobs until the node is stopped, so that the stop
     * falls mid-drain however fast the jobs go; the batches held then are claimed before the stop
     * and commit (or fail) after it.
     */
    private CountDownLatch nodeStopped;

    private AtomicInteger handled;

    private void holdAfterTheFirstJobs() throws InterruptedException {
        if (handled.incrementAndGet() > 200) {
            assertThat(nodeStopped.await(60, TimeUnit.SECONDS)).isTrue();
        }
    }

    /**
     * Stops the worker node once 200 jobs were handled, keeps it down until {@code done} has
     * grown by 100 (the other node's shards go on being drained), then starts it again.
     */
    private void restartTheNodeMidRun(java.util.function.LongSupplier done) throws Exception {
        Await.until("the first jobs handled", Duration.ofSeconds(60), () -> handled.get() >= 200);
        long downAfter;
        run(STOP);
        try {
            nodeStopped.countDown();
            downAfter = done.getAsLong();
            Await.until(
                    "100 jobs done while the node is down",
                    Duration.ofSeconds(60),
                    () -> done.getAsLong() >= downAfter + 100);
        } finally {
            run(START);
        }
        System.out.printf(
                "citus worker restart: the node went down after %d jobs and came back after %d%n",
                downAfter, done.getAsLong());
    }

    /** Whether the jobs table is empty; false while the count cannot reach every node. */
    private boolean drained() {
        try {
            return dsl.fetchCount(jobs()) == 0;
        } catch (org.jooq.exception.DataAccessException nodeDown) {
            return false;
        }
    }

    private List<Long> enqueue(String name) {
        List<Long> ids = new java.util.ArrayList<>();
        for (int i = 0; i < JOBS; i += 1000) {
            ids.addAll(queue.enqueueAll(dsl, Collections.nCopies(1000, NewJob.of(name, "noop"))));
        }
        return ids;
    }

    @Test
    void transactionalWorkersLoseNothingAndRunEachJobOnceAcrossAWorkerRestart() throws Exception {
        List<Long> ids = enqueue("restart-tx");
        try (TransactionalWorker worker = TransactionalWorker.builder(
                        new JobQueue(Locksmith.builder(pool).schema(schema).build()), "restart-tx", (batch, tx) -> {
                            for (Job job : batch) {
                                holdAfterTheFirstJobs();
                                tx.insertInto(results())
                                        .columns(DSL.field("job_id"))
                                        .values(job.id())
                                        .execute();
                            }
                        })
                .threads(4)
                .batchSize(10)
                .pollInterval(Duration.ofMillis(200))
                .build()
                .start()) {
            restartTheNodeMidRun(worker::processed);
            Await.until("the queue to drain", Duration.ofSeconds(180), this::drained);
            assertThat(worker.liveThreads()).isEqualTo(4);
        }
        List<Long> done = dsl.select(DSL.field("job_id", Long.class))
                .from(results())
                .fetch()
                .getValues(0, Long.class);
        assertThat(done).hasSize(JOBS).containsExactlyInAnyOrderElementsOf(ids);
    }

    @Test
    void leasedWorkersLoseNothingAcrossAWorkerRestart() throws Exception {
        List<Long> ids = enqueue("restart-lease");
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        AtomicInteger finished = new AtomicInteger();
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool).schema(schema).build()), "restart-lease", (job, tx) -> {
                            holdAfterTheFirstJobs();
                            runs.computeIfAbsent(job.id(), id -> new AtomicInteger())
                                    .incrementAndGet();
                            finished.incrementAndGet();
                        })
                .threads(4)
                .lease(Duration.ofSeconds(5))
                .rescueInterval(Duration.ofSeconds(1))
                .pollInterval(Duration.ofMillis(200))
                .build()
                .start()) {
            restartTheNodeMidRun(finished::get);
            Await.until("the queue to drain", Duration.ofSeconds(180), this::drained);
        }
        assertThat(runs.keySet()).containsExactlyInAnyOrderElementsOf(ids);
        Map<Integer, Long> timesRun =
                runs.values().stream().collect(Collectors.groupingBy(AtomicInteger::get, Collectors.counting()));
        System.out.printf("citus worker restart, leased: jobs by times run %s%n", timesRun);
    }
}

package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.CuttingProxy;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.provisioning.ScratchDatabase;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Leases are tokens unique per claim, a lapsed lease does not make a job loop, and a worker
 * refuses a pool too small for its heartbeats.
 */
class LeaseTest extends DatabaseTest {

    private static final Duration LEASE = Duration.ofSeconds(1);

    private JobQueue queue;

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(dsl);
    }

    @Test
    void aJobFromAnotherDatabaseCannotSettleAnUnrelatedJobWithTheSameIdAndWorker() {
        ScratchDatabase other = TestPostgres.freshMigrated("lease-other");
        try (HikariDataSource otherPool = TestPostgres.pool(other, 2)) {
            DSLContext otherDsl = DSL.using(otherPool, SQLDialect.POSTGRES);
            JobQueue otherQueue = new JobQueue(otherDsl);
            // the same job id in both databases, claimed by the README's fixed worker id
            dsl.execute("INSERT INTO locksmith.jobs (id, queue, kind) VALUES (4242, 'q', 'mine')");
            otherDsl.execute("INSERT INTO locksmith.jobs (id, queue, kind) VALUES (4242, 'q', 'theirs')");
            Job mine = queue.claim("q", 1, Duration.ofMinutes(1), "worker-1").get(0);
            Job theirs =
                    otherQueue.claim("q", 1, Duration.ofMinutes(1), "worker-1").get(0);
            assertThat(mine.id()).isEqualTo(theirs.id());
            assertThat(mine.attempts()).isEqualTo(theirs.attempts());

            assertThat(complete(otherDsl, otherQueue, mine)).isFalse();
            assertThat(otherDsl.transactionResult(c -> otherQueue.fail(c.dsl(), mine, "x"))
                            .outcome())
                    .isEqualTo(FailResult.Outcome.LEASE_LOST);
            assertThat(otherQueue.heartbeat(mine, Duration.ofMinutes(5))).isFalse();
            assertThat(otherQueue.release(mine)).isFalse();
            Job untouched = otherQueue.find(otherDsl, 4242).orElseThrow();
            assertThat(untouched.status()).isEqualTo(theirs.status());
            assertThat(untouched.lockedUntil()).isEqualTo(theirs.lockedUntil());
            assertThat(untouched.leaseId()).isEqualTo(theirs.leaseId());

            assertThat(complete(otherDsl, otherQueue, theirs)).isTrue();
        } finally {
            TestPostgres.drop(other);
        }
    }

    @Test
    void aClaimAfterAReleaseMintsANewTokenSoTheOldJobCannotCompleteIt() {
        queue.enqueue(dsl, NewJob.of("q", "k"));
        Job first = queue.claim("q", 1, Duration.ofMinutes(1), "worker-1").get(0);
        assertThat(queue.release(first)).isTrue();
        Job second = queue.claim("q", 1, Duration.ofMinutes(1), "worker-1").get(0);
        assertThat(second.id()).isEqualTo(first.id());
        assertThat(second.attempts()).isEqualTo(first.attempts());
        assertThat(second.leaseId()).isNotEqualTo(first.leaseId());

        assertThat(complete(dsl, queue, first)).isFalse();
        assertThat(complete(dsl, queue, second)).isTrue();
    }

    @Test
    void aDelayCountsFromTheEnqueueingStatementNotTheTransactionStart() {
        OffsetDateTime[] enqueuedAt = new OffsetDateTime[1];
        long id = dsl.transactionResult(c -> {
            c.dsl().execute("SELECT pg_sleep(1)");
            enqueuedAt[0] = c.dsl().fetchValue(DSL.field("clock_timestamp()", OffsetDateTime.class));
            return queue.enqueue(
                    c.dsl(),
                    NewJob.builder("q", "k").delay(Duration.ofSeconds(2)).build());
        });
        OffsetDateTime runAt = queue.find(dsl, id).orElseThrow().runAt();
        assertThat(runAt).isAfterOrEqualTo(enqueuedAt[0].plusSeconds(2));
        assertThatThrownBy(() -> NewJob.builder("q", "k")
                        .delay(Duration.ofSeconds(Long.MAX_VALUE))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delay must be between");
    }

    @Test
    void aWorkerRefusesAPoolTooSmallForItsHeartbeats() {
        try (HikariDataSource small = TestPostgres.pool(database, 5)) {
            JobWorker worker =
                    JobWorker.builder(small, "q", (job, tx) -> {}).threads(4).build();
            assertThatThrownBy(worker::start)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("allows at most 5 connections")
                    .hasMessageContaining("needs 8");
            assertThat(JobWorker.connectionsNeeded(4, false)).isEqualTo(7);
            try (JobWorker enough = JobWorker.builder(small, "q", (job, tx) -> {})
                    .threads(2)
                    .listen(false)
                    .build()
                    .start()) {
                assertThat(enough.workerId()).isNotBlank();
            }
        }
    }

    /**
     * The first run of the job loses its lease while its handler still runs ({@code lapse}); the
     * job is claimed again and its second run must keep its own lease alive by heartbeats until it
     * completes, however the stale first run ends. Before leases were tracked by lease id, the
     * stale run's end stopped the second run's heartbeats, and the job looped until it failed.
     */
    private void aLapsedLeaseDoesNotMakeTheJobLoop(DataSource workerDataSource, Runnable lapse) throws Exception {
        long id = queue.enqueue(
                dsl, NewJob.builder("lapse", "slow").maxAttempts(4).build());
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch secondStarted = new CountDownLatch(1);
        CountDownLatch completed = new CountDownLatch(1);
        AtomicReference<Throwable> lapseFailed = new AtomicReference<>();
        JobHandler handler = (job, tx) -> {
            int run = runs.incrementAndGet();
            if (run == 1) {
                try {
                    lapse.run();
                } catch (RuntimeException | AssertionError e) {
                    lapseFailed.set(e); // reported by the test, not only to the worker
                    throw e;
                }
                assertThat(secondStarted.await(30, TimeUnit.SECONDS)).isTrue();
                return; // the stale run ends while the second one runs
            }
            secondStarted.countDown();
            // outlives its lease: only heartbeats keep it, so wait until they have pushed it two
            // leases past the expiry the claim set
            awaitTrue(
                    "heartbeats extended the second run's lease",
                    "SELECT coalesce(bool_or(locked_until >= ?::timestamptz), false) "
                            + "FROM locksmith.jobs WHERE id = ? AND lease_id = ?",
                    job.lockedUntil().plus(LEASE.multipliedBy(2)),
                    job.id(),
                    job.leaseId());
        };
        WorkerEvents listener = new WorkerEvents() {
            @Override
            public void completed(Job job) {
                completed.countDown();
            }
        };
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(workerDataSource)
                                .observer(listener)
                                .build()),
                        "lapse",
                        handler)
                .threads(2)
                .lease(LEASE)
                .rescueInterval(Duration.ofMillis(200))
                .pollInterval(Duration.ofMillis(50))
                .listen(false)
                .build()
                .start()) {
            boolean done = completed.await(30, TimeUnit.SECONDS);
            assertThat(lapseFailed.get()).as("what made the lease lapse failed").isNull();
            assertThat(done).as("completed").isTrue();
        }
        assertThat(runs).as("runs of the handler").hasValue(2);
        assertThat(queue.find(dsl, id)).as("completed jobs are deleted").isEmpty();
    }

    @Test
    void aLeaseThatLapsedAndWasRescuedDoesNotMakeTheJobLoop() throws Exception {
        aLapsedLeaseDoesNotMakeTheJobLoop(pool, () -> {
            // what rescueExpired does once a lease has expired (a long GC pause, a stalled host)
            dsl.execute(
                    "UPDATE locksmith.jobs SET status = 'pending', locked_by = NULL, locked_until = NULL, lease_id = NULL "
                            + "WHERE queue = 'lapse'");
        });
    }

    @Test
    void aDatabaseOutageDuringAJobDoesNotMakeItLoop() throws Exception {
        try (CuttingProxy proxy = new CuttingProxy(database.jdbcUrl());
                HikariDataSource proxied = proxy.pool(database, 8, 500)) {
            aLapsedLeaseDoesNotMakeTheJobLoop(proxied, () -> {
                proxy.down(); // heartbeats fail, the lease expires
                try {
                    awaitTrue(
                            "the lease expired",
                            "SELECT coalesce(bool_and(locked_until < clock_timestamp()), false) "
                                    + "FROM locksmith.jobs WHERE queue = 'lapse' AND status = 'running'");
                    // another worker, which still reaches the database, rescues the expired lease
                    assertThat(queue.rescueExpired()).isEqualTo(1);
                } finally {
                    proxy.up(); // this worker claims the job again
                }
            });
        }
    }

    /** Polls {@code booleanSql} on the test's own connection until it is true, for at most 30 s. */
    private void awaitTrue(String what, String booleanSql, Object... binds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Boolean.TRUE.equals(dsl.fetchValue(booleanSql, binds))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            dsl.execute("SELECT pg_sleep(0.02)");
        }
    }

    private static boolean complete(DSLContext on, JobQueue q, Job job) {
        Boolean done = on.transactionResult(c -> q.complete(c.dsl(), job));
        return done;
    }
}

package dev.locksmith.it.metrics;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Backoff;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.WakeUp;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultExecuteListenerProvider;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Scripted job workloads whose every count is known: the job counters and timers of
 * {@code LocksmithMetrics} must come out exactly, per queue and kind.
 */
class MetricsJobsTest extends MetricsDatabaseTest {

    private static final JobQueueConfig FAST_RETRY = JobQueueConfig.builder()
            .retryBackoff(new Backoff(Duration.ofMillis(1), Duration.ofMillis(1), 1.0, 0.0))
            .build();

    private JobQueue queue;

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(observed);
    }

    /**
     * {@code locksmith.jobs.inserted} counts what the name says: the rows an enqueue inserted, in
     * the producer's transaction, whether or not it commits (it was {@code locksmith.jobs.enqueued},
     * which read as committed jobs and made "backlog = enqueued - completed" drift). The backlog is
     * what the depth gauge counts.
     */
    @Test
    void insertedCountsEveryInsertEvenOneThatRollsBackWhileTheDepthCountsTheBacklog() {
        queue.enqueueAll(observed, Collections.nCopies(5, NewJob.of("rolled", "k")));
        try {
            observed.transaction(c -> {
                queue.enqueueAll(c.dsl(), Collections.nCopies(3, NewJob.of("rolled", "k")));
                throw new IllegalStateException("the producer's transaction rolls back");
            });
        } catch (IllegalStateException expected) {
            // nothing of it remains
        }
        assertThat(counted("locksmith.jobs.inserted", "queue", "rolled", "kind", "k"))
                .isEqualTo(8);
        assertThat(registry.find("locksmith.jobs.enqueued").meters()).isEmpty();
        assertThat(queue.depth("rolled", 100).pending()).isEqualTo(5);
    }

    /**
     * {@code locksmith.worker.wakeups} says why idle threads woke: with polls ten minutes apart
     * (adaptive poll off), a job enqueued once LISTEN is up with its NOTIFY in the producer's
     * transaction (no in-process wake-up) can only have been brought by the notification, and
     * the counter says so; one enqueued with the wake-up after commit wakes a waiting worker
     * in-process.
     */
    @Test
    void wakeUpsAreCountedByReason() throws InterruptedException {
        // each time a claim of the worker comes back empty: from then on it waits for work
        java.util.concurrent.Semaphore idle = new java.util.concurrent.Semaphore(0);
        DSLContext listening = Locksmith.builder(dsl)
                .observer(metrics, new WorkerEvents() {
                    @Override
                    public void idle() {
                        idle.release();
                    }
                })
                .build()
                .dsl();
        try (JobWorker worker = JobWorker.builder(new JobQueue(listening), "woken", (job, tx) -> {})
                .threads(1)
                .pollInterval(Duration.ofMinutes(10))
                .minPollInterval(Duration.ofMinutes(10))
                .build()
                .start()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (dsl.fetchCount(
                            DSL.table("pg_stat_activity"),
                            DSL.field("query")
                                    .eq("LISTEN locksmith_jobs")
                                    .and(DSL.field("datname").eq(DSL.field("current_database()"))))
                    == 0) {
                assertThat(System.nanoTime() - deadline)
                        .as("LISTEN up within 60 s")
                        .isNegative();
                dsl.execute("SELECT pg_sleep(0.02)");
            }
            // Each job comes while the worker waits for work, and only its notification (the poll
            // being ten minutes) wakes it. (Enqueued as soon as the previous job was gone, the
            // second job was found by the claim the worker makes after a run, with no wake-up, in
            // one CI run on JDK 25.)
            JobQueue notifying = new JobQueue(
                    observed,
                    JobQueueConfig.builder().wakeUp(WakeUp.IN_TRANSACTION).build());
            for (int i = 0; i < 2; i++) {
                // the worker waits for work (a claim of it came back empty since the last job was
                // enqueued), so that the job comes to it by its notification, not by a claim still
                // under way
                assertThat(idle.tryAcquire(60, TimeUnit.SECONDS))
                        .as("the worker waits for work")
                        .isTrue();
                idle.drainPermits();
                notifying.enqueue(observed, NewJob.of("woken", "k"));
                awaitNoJob(JOBS.QUEUE.eq("woken"));
            }
            assertThat(counted("locksmith.worker.wakeups", "queue", "woken", "reason", "notification"))
                    .isGreaterThanOrEqualTo(1);
            assertThat(counted("locksmith.worker.wakeups", "queue", "woken", "reason", "in_process"))
                    .isZero();
        }
        // A worker that does not LISTEN, once its first claim has come back empty: only the
        // in-process wake-up of an enqueue committed in this JVM (or a poll ten minutes away) can
        // bring it the job. (The listening worker above is no witness: a job committed while its
        // handler thread claims after a run is found by that claim, with no wake-up at all.)
        CountDownLatch waiting = new CountDownLatch(1);
        DSLContext following = Locksmith.builder(dsl)
                .observer(metrics, new WorkerEvents() {
                    @Override
                    public void idle() {
                        waiting.countDown();
                    }
                })
                .build()
                .dsl();
        try (JobWorker worker = JobWorker.builder(new JobQueue(following), "woken-here", (job, tx) -> {})
                .threads(1)
                .listen(false)
                .pollInterval(Duration.ofMinutes(10))
                .minPollInterval(Duration.ofMinutes(10))
                .build()
                .start()) {
            assertThat(waiting.await(60, TimeUnit.SECONDS))
                    .as("the worker's first claim came back empty")
                    .isTrue();
            queue.enqueue(observed, NewJob.of("woken-here", "k"));
            awaitNoJob(JOBS.QUEUE.eq("woken-here"));
        }
        assertThat(counted("locksmith.worker.wakeups", "queue", "woken-here", "reason", "in_process"))
                .isEqualTo(1);
        assertThat(counted("locksmith.worker.wakeups", "queue", "woken-here", "reason", "poll"))
                .isZero();
    }

    @Test
    void aJobWorkerRunCountsEnqueuedClaimedCompletedRetriedAndFailedJobsPerKindExactly() {
        queue.enqueueAll(observed, Collections.nCopies(6, NewJob.of("work", "a")));
        long unique = queue.enqueue(
                observed, NewJob.builder("work", "a").uniqueKey("a-7").build());
        // a live duplicate of the unique key inserts nothing, and is not counted
        assertThat(queue.enqueue(
                        observed, NewJob.builder("work", "a").uniqueKey("a-7").build()))
                .isEqualTo(unique);
        queue.enqueueAll(observed, Collections.nCopies(3, NewJob.of("work", "b")));
        queue.enqueue(observed, NewJob.builder("work", "c").maxAttempts(1).build());
        // kind b fails its first attempt and then succeeds; kind c fails its only attempt
        JobHandler handler = (job, tx) -> {
            if (job.kind().equals("c") || (job.kind().equals("b") && job.attempts() == 1)) {
                throw new IllegalStateException("scripted failure of " + job.kind() + ", attempt " + job.attempts());
            }
        };
        try (JobWorker worker = JobWorker.builder(new JobQueue(observed, FAST_RETRY), "work", handler)
                .threads(2)
                .pollInterval(Duration.ofMillis(20))
                .build()
                .start()) {
            awaitNoJob(JOBS.QUEUE.eq("work").and(JOBS.STATUS.in("pending", "running")));
        } // close() returns once every handler thread has ended, and so recorded what it ran

        assertThat(counted("locksmith.jobs.inserted", "queue", "work", "kind", "a"))
                .isEqualTo(7);
        assertThat(counted("locksmith.jobs.inserted", "queue", "work", "kind", "b"))
                .isEqualTo(3);
        assertThat(counted("locksmith.jobs.inserted", "queue", "work", "kind", "c"))
                .isEqualTo(1);
        assertThat(counted("locksmith.jobs.claimed", "queue", "work", "kind", "a"))
                .isEqualTo(7);
        assertThat(counted("locksmith.jobs.claimed", "queue", "work", "kind", "b"))
                .isEqualTo(6);
        assertThat(counted("locksmith.jobs.claimed", "queue", "work", "kind", "c"))
                .isEqualTo(1);
        assertThat(counted("locksmith.jobs.completed", "queue", "work", "kind", "a"))
                .isEqualTo(7);
        assertThat(counted("locksmith.jobs.completed", "queue", "work", "kind", "b"))
                .isEqualTo(3);
        assertThat(counted("locksmith.jobs.completed", "queue", "work", "kind", "c"))
                .isZero();
        assertThat(counted("locksmith.jobs.retried", "queue", "work", "kind", "b"))
                .isEqualTo(3);
        assertThat(counted("locksmith.jobs.retried", "queue", "work")).isEqualTo(3);
        assertThat(counted("locksmith.jobs.failed", "queue", "work", "kind", "c"))
                .isEqualTo(1);
        assertThat(counted("locksmith.jobs.failed", "queue", "work")).isEqualTo(1);
        assertThat(counted("locksmith.jobs.lease.lost")).isZero();
        assertThat(counted("locksmith.jobs.released")).isZero();
        assertThat(counted("locksmith.jobs.rescued")).isZero();

        assertThat(timed("locksmith.jobs.handler", "queue", "work", "kind", "a", "outcome", "ok"))
                .isEqualTo(7);
        assertThat(timed("locksmith.jobs.handler", "queue", "work", "kind", "b", "outcome", "ok"))
                .isEqualTo(3);
        assertThat(timed("locksmith.jobs.handler", "queue", "work", "kind", "b", "outcome", "error"))
                .isEqualTo(3);
        assertThat(timed("locksmith.jobs.handler", "queue", "work", "kind", "c", "outcome", "error"))
                .isEqualTo(1);
        assertThat(timed("locksmith.jobs.handler")).isEqualTo(14);
        // The handlers write nothing, so their jobs are completed in batches: one timing per
        // statement, for one to ten jobs each (the counter above counts jobs).
        assertThat(timed("locksmith.jobs.complete", "queue", "work", "outcome", "ok"))
                .isBetween(1L, 10L);
        assertThat(timed("locksmith.jobs.complete"))
                .isEqualTo(timed("locksmith.jobs.complete", "queue", "work", "outcome", "ok"));
        assertThat(timed("locksmith.jobs.fail", "queue", "work", "outcome", "retry_scheduled"))
                .isEqualTo(3);
        assertThat(timed("locksmith.jobs.fail", "queue", "work", "outcome", "failed"))
                .isEqualTo(1);
        assertThat(timed("locksmith.jobs.fail")).isEqualTo(4);
        // how many claims found nothing depends on timing; none failed, and none used another outcome
        assertThat(timed("locksmith.jobs.claim", "queue", "work"))
                .isEqualTo(timed("locksmith.jobs.claim", "queue", "work", "outcome", "ok")
                        + timed("locksmith.jobs.claim", "queue", "work", "outcome", "empty"));
    }

    @Test
    void claimsAreTimedByOutcomeAndEachClaimedJobCounted() {
        queue.enqueueAll(observed, Collections.nCopies(3, NewJob.of("claims", "k")));
        assertThat(queue.claim("claims", 2, Duration.ofMinutes(1), "w")).hasSize(2);
        assertThat(queue.claim("claims", 2, Duration.ofMinutes(1), "w")).hasSize(1);
        assertThat(queue.claim("claims", 2, Duration.ofMinutes(1), "w")).isEmpty();
        assertThat(claimInTransaction("claims")).isEmpty();
        queue.enqueue(observed, NewJob.of("claims", "k"));
        assertThat(claimInTransaction("claims")).hasSize(1);

        assertThat(timed("locksmith.jobs.claim", "queue", "claims", "outcome", "ok"))
                .isEqualTo(3);
        assertThat(timed("locksmith.jobs.claim", "queue", "claims", "outcome", "empty"))
                .isEqualTo(2);
        assertThat(timed("locksmith.jobs.claim")).isEqualTo(5);
        assertThat(counted("locksmith.jobs.claimed", "queue", "claims", "kind", "k"))
                .isEqualTo(4);
    }

    @Test
    void aLostLeaseIsCountedOncePerLeaseHoweverManyCallsFindItAndRescuesCountByOutcome() {
        queue.enqueue(observed, NewJob.of("lease", "k"));
        queue.enqueue(observed, NewJob.builder("lease", "k").maxAttempts(1).build());
        List<Job> held = queue.claim("lease", 2, Duration.ofMinutes(1), "w1");
        assertThat(held).hasSize(2);
        Job retryable =
                held.stream().filter(j -> j.maxAttempts() > 1).findFirst().orElseThrow();
        Job lastAttempt =
                held.stream().filter(j -> j.maxAttempts() == 1).findFirst().orElseThrow();
        // the leases run out (on the database clock, as a crashed worker's would)
        dsl.execute("UPDATE locksmith.jobs SET locked_until = now() - interval '1 second' WHERE queue = 'lease'");
        assertThat(queue.rescueExpired()).isEqualTo(2);
        assertThat(counted("locksmith.jobs.rescued", "queue", "lease", "outcome", "pending"))
                .isEqualTo(1);
        assertThat(counted("locksmith.jobs.rescued", "queue", "lease", "outcome", "failed"))
                .isEqualTo(1);

        assertThat(complete(retryable)).isFalse();
        assertThat(counted("locksmith.jobs.lease.lost", "queue", "lease", "kind", "k"))
                .isEqualTo(1);
        // the same lease found gone again, by every other call: still one
        assertThat(queue.heartbeat(retryable, Duration.ofMinutes(1))).isFalse();
        assertThat(observed.transactionResult(c -> queue.fail(c.dsl(), retryable, "late"))
                        .outcome())
                .isEqualTo(FailResult.Outcome.LEASE_LOST);
        assertThat(queue.release(retryable)).isFalse();
        assertThat(counted("locksmith.jobs.lease.lost", "queue", "lease", "kind", "k"))
                .isEqualTo(1);
        // another lease, lost too: two
        assertThat(complete(lastAttempt)).isFalse();
        assertThat(counted("locksmith.jobs.lease.lost", "queue", "lease", "kind", "k"))
                .isEqualTo(2);
        assertThat(timed("locksmith.jobs.complete", "queue", "lease", "outcome", "lease_lost"))
                .isEqualTo(2);
        assertThat(timed("locksmith.jobs.fail", "queue", "lease", "outcome", "lease_lost"))
                .isEqualTo(1);

        // the rescued job under a new lease, given back
        Job again = queue.claim("lease", 1, Duration.ofMinutes(1), "w2").get(0);
        assertThat(again.id()).isEqualTo(retryable.id());
        assertThat(queue.release(again)).isTrue();
        assertThat(counted("locksmith.jobs.released", "queue", "lease", "kind", "k"))
                .isEqualTo(1);
        assertThat(counted("locksmith.jobs.claimed", "queue", "lease", "kind", "k"))
                .isEqualTo(3);
        assertThat(counted("locksmith.jobs.completed")).isZero();
    }

    @Test
    void aJobCompletedWhileAHeartbeatWaitedForItsRowIsNotALostLease() throws Exception {
        AtomicBoolean heartbeatWaited = new AtomicBoolean();
        AtomicBoolean completionReleased = new AtomicBoolean();
        AtomicBoolean heartbeatEnded = new AtomicBoolean();
        CountDownLatch maintenanceMovedOn = new CountDownLatch(1);
        // The completing DELETE holds the job's row until a heartbeat waits for it; that heartbeat
        // then finds the row gone, for the good reason that the job is done.
        ExecuteListener choreography = new ExecuteListener() {
            private static final long serialVersionUID = 1L;

            @Override
            public void executeStart(ExecuteContext ctx) {
                if (Thread.currentThread().getName().endsWith("-maintenance") && heartbeatEnded.get()) {
                    maintenanceMovedOn.countDown(); // the heartbeat task, report included, is over
                }
            }

            @Override
            public void executeEnd(ExecuteContext ctx) {
                String sql = String.valueOf(ctx.sql()).toLowerCase(Locale.ROOT);
                String thread = Thread.currentThread().getName();
                if (thread.endsWith("-handler") && sql.startsWith("delete from")) {
                    heartbeatWaited.set(awaitLockWaiter());
                    completionReleased.set(true);
                } else if (thread.endsWith("-maintenance")
                        && sql.contains("set \"locked_until\"")
                        && completionReleased.get()) {
                    heartbeatEnded.set(true);
                }
            }
        };
        DSLContext choreographed =
                DSL.using(observed.configuration().derive(new DefaultExecuteListenerProvider(choreography)));
        queue.enqueue(observed, NewJob.of("raced", "k"));
        // The handler writes (txid_current() assigns a transaction id, as any write does), so the
        // job is completed in its transaction, which holds the row until it commits.
        try (JobWorker worker = JobWorker.builder(
                        choreographed, "raced", (job, tx) -> tx.execute("SELECT txid_current()"))
                .lease(Duration.ofSeconds(3)) // a heartbeat every second
                .rescueInterval(Duration.ofMillis(100))
                .listen(false)
                .pollInterval(Duration.ofMillis(20))
                .build()
                .start()) {
            assertThat(maintenanceMovedOn.await(60, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(heartbeatWaited)
                .as("a heartbeat waited for the completing transaction")
                .isTrue();
        assertThat(counted("locksmith.jobs.completed", "queue", "raced", "kind", "k"))
                .isEqualTo(1);
        assertThat(timed("locksmith.jobs.handler", "queue", "raced", "kind", "k", "outcome", "ok"))
                .isEqualTo(1);
        assertThat(counted("locksmith.jobs.lease.lost")).isZero();
    }

    /** Waits (up to 30 s) until a backend of this database waits for a lock; false if none did. */
    private boolean awaitLockWaiter() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() - deadline < 0) {
            Number waiting = (Number) dsl.fetchValue("SELECT count(*) FROM pg_stat_activity "
                    + "WHERE datname = current_database() AND wait_event_type = 'Lock'");
            if (waiting.intValue() > 0) {
                return true;
            }
            dsl.execute("SELECT pg_sleep(0.01)");
        }
        return false;
    }

    private List<Job> claimInTransaction(String q) {
        return observed.transactionResult(c -> queue.claimInTransaction(c.dsl(), q, 5));
    }

    private boolean complete(Job job) {
        return observed.transactionResult(c -> queue.complete(c.dsl(), job));
    }

    @Test
    void aTransactionalWorkerCountsClaimsAndCompletionsOnlyOfTheBatchesThatCommitted() {
        queue.enqueueAll(observed, Collections.nCopies(3, NewJob.of("batch", "t")));
        queue.enqueue(observed, NewJob.builder("batch", "p").maxAttempts(1).build());
        // the poison job fails the whole first batch (rolled back: not counted as claimed, since its
        // jobs are back in the queue), then fails alone under its savepoint while the other three
        // commit: each job is counted claimed once, by the batch that committed it
        try (TransactionalWorker worker = TransactionalWorker.builder(observed, "batch", (jobs, tx) -> {
                    for (Job job : jobs) {
                        if (job.kind().equals("p")) {
                            throw new IllegalStateException("poison job " + job.id());
                        }
                    }
                })
                .threads(1)
                .batchSize(10)
                .pollInterval(Duration.ofMillis(20))
                .build()
                .start()) {
            awaitNoJob(JOBS.QUEUE.eq("batch").and(JOBS.STATUS.in("pending", "running")));
        } // close() joins the worker's thread: the committed batch has been reported

        assertThat(counted("locksmith.jobs.claimed", "queue", "batch", "kind", "t"))
                .isEqualTo(3);
        assertThat(counted("locksmith.jobs.claimed", "queue", "batch", "kind", "p"))
                .isEqualTo(1);
        assertThat(counted("locksmith.jobs.completed", "queue", "batch", "kind", "t"))
                .isEqualTo(3);
        assertThat(counted("locksmith.jobs.completed", "queue", "batch", "kind", "p"))
                .isZero();
        assertThat(counted("locksmith.jobs.failed", "queue", "batch", "kind", "p"))
                .isEqualTo(1);
        assertThat(counted("locksmith.jobs.retried")).isZero();
        assertThat(timed("locksmith.jobs.handler", "queue", "batch", "kind", "mixed", "outcome", "error"))
                .isEqualTo(1);
        assertThat(timed("locksmith.jobs.handler", "queue", "batch", "kind", "t", "outcome", "ok"))
                .isEqualTo(3);
        assertThat(timed("locksmith.jobs.handler", "queue", "batch", "kind", "p", "outcome", "error"))
                .isEqualTo(1);
        assertThat(timed("locksmith.jobs.handler")).isEqualTo(5);
        assertThat(timed("locksmith.jobs.fail", "queue", "batch", "outcome", "failed"))
                .isEqualTo(1);
    }
}

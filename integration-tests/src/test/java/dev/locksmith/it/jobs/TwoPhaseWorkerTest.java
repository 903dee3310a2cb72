package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.locksmith.exception.LocksmithException;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.PreparedJob;
import dev.locksmith.jobs.ResolveResult;
import dev.locksmith.jobs.TwoPhaseJobHandler;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import dev.locksmith.provisioning.Source;
import java.io.IOException;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The two-phase worker's own steps: claim and handler writes in a transaction, PREPARE, the side
 * effect outside any transaction with the gid as its key, then COMMIT PREPARED; and what each
 * failure does (the side effect or the handler throws, a transaction that cannot be prepared).
 */
class TwoPhaseWorkerTest extends TwoPhaseTest {

    private static final Duration POLL = Duration.ofMillis(50);

    @Test
    void eachJobsWritesAndRemovalCommitAfterItsSideEffectUnderTheGidThatNamesIt() throws Exception {
        List<Long> ids = queue.enqueueAll(dsl, Collections.nCopies(30, NewJob.of("pay", "charge")));
        CountDownLatch committed = new CountDownLatch(30);
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        observed(counting(JobEvent.COMPLETED, committed)), "pay", recording(), ledgerCheck())
                .threads(3)
                .pollInterval(POLL)
                .build()
                .start()) {
            await(committed, "30 jobs committed");
            assertThat(worker.processed()).isEqualTo(30);
        }
        Map<Long, Integer> once = ids.stream().collect(Collectors.toMap(Function.identity(), id -> 1));
        assertThat(dsl.fetchCount(JOBS)).isZero();
        assertThat(results()).isEqualTo(once);
        assertThat(effects()).isEqualTo(once);
        List<String> keys = dsl.fetch("SELECT gid FROM effect_ledger").getValues(0, String.class);
        assertThat(keys)
                .containsExactlyInAnyOrderElementsOf(
                        ids.stream().map(this::gidOf).toList())
                .allSatisfy(gid -> assertThat(gid).matches("locksmith:[0-9a-f]{1,16}:[0-9]+:locksmith:[0-9]+"));
    }

    @Test
    void whilePreparedTheJobStaysLockedClaimersSkipItAndNoSessionHoldsTheTransaction() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("held", "charge"));
        CountDownLatch inSideEffect = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch committed = new CountDownLatch(1);
        TwoPhaseJobHandler blocking = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                tx.execute("INSERT INTO twophase_results VALUES (?)", job.id());
            }

            @Override
            public void performSideEffect(PreparedJob job) throws InterruptedException {
                inSideEffect.countDown();
                assertThat(release.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
                recordEffect(job);
            }
        };
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        observed(counting(JobEvent.COMPLETED, committed)), "held", blocking, ledgerCheck())
                .threads(1)
                .pollInterval(POLL)
                .build()
                .start()) {
            await(inSideEffect, "the side effect started");
            assertThat(preparedGids(dsl)).containsExactly(gidOf(id));
            assertThat(dsl.fetchValue("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                            + "AND state LIKE 'idle in transaction%'"))
                    .as("sessions holding an open transaction while the side effect runs")
                    .isEqualTo(0L);
            assertThat(claimableIds("held")).as("claims skip the prepared job").isEmpty();
            Job asClaimed = queue.find(dsl, id).orElseThrow();
            assertThat(asClaimed.status())
                    .as("other sessions read the row as the claim left it")
                    .isEqualTo(JobStatus.PENDING);
            assertThat(asClaimed.attempts()).as("the claim counted the attempt").isEqualTo(1);
            assertThat(dsl.fetchValue(
                            "SELECT run_at > now() + interval '30 seconds' FROM locksmith.jobs WHERE id = ?", id))
                    .as("and holds the job")
                    .isEqualTo(true);
            assertThat(results())
                    .as("the handler's writes are not committed yet")
                    .isEmpty();
            assertThat(worker.resolveNow())
                    .as("a resolver leaves a transaction younger than its threshold alone")
                    .isEqualTo(new ResolveResult(0, 0, 0));
            release.countDown();
            await(committed, "the job committed");
        }
        assertThat(queue.find(dsl, id)).isEmpty();
        assertThat(results()).containsExactly(entry(id, 1));
        assertThat(effects()).containsExactly(entry(id, 1));
    }

    @Test
    void aSideEffectThatThrowsIsRolledBackAndCountedAndTheRetryUsesTheSameGid() throws Exception {
        long id = queue.enqueue(
                dsl, NewJob.builder("flaky", "charge").maxAttempts(5).build());
        List<String> gids = new CopyOnWriteArrayList<>();
        List<Integer> attemptNumbers = new CopyOnWriteArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch committed = new CountDownLatch(1);
        TwoPhaseJobHandler flaky = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                tx.execute("INSERT INTO twophase_results VALUES (?)", job.id());
            }

            @Override
            public void performSideEffect(PreparedJob job) throws IOException {
                gids.add(job.gid());
                attemptNumbers.add(job.job().attempts());
                if (calls.incrementAndGet() < 3) {
                    throw new IOException("provider unavailable");
                }
                recordEffect(job);
            }
        };
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        new JobQueue(observed(counting(JobEvent.COMPLETED, committed)), FAST_RETRY),
                        "flaky",
                        flaky,
                        ledgerCheck())
                .threads(2)
                .pollInterval(POLL)
                .build()
                .start()) {
            await(committed, "the job committed on its third attempt");
            assertThat(worker.processed())
                    .as("two failed attempts counted, one commit")
                    .isEqualTo(3);
        }
        assertThat(gids).containsExactly(gidOf(id), gidOf(id), gidOf(id));
        assertThat(attemptNumbers).as("the attempt numbers").containsExactly(1, 2, 3);
        assertThat(results()).as("the failed attempts' writes were rolled back").containsExactly(entry(id, 1));
        assertThat(effects()).containsExactly(entry(id, 1));
    }

    @Test
    void aSideEffectThatAlwaysFailsEndsTheJobFailedAfterMaxAttemptsWithNothingCommitted() throws Exception {
        long id = queue.enqueue(
                dsl, NewJob.builder("declined", "charge").maxAttempts(2).build());
        CountDownLatch failed = new CountDownLatch(1);
        TwoPhaseJobHandler declined = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                tx.execute("INSERT INTO twophase_results VALUES (?)", job.id());
            }

            @Override
            public void performSideEffect(PreparedJob job) {
                throw new IllegalStateException("card declined for " + job.gid());
            }
        };
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        new JobQueue(observed(counting(JobEvent.FAILED, failed)), FAST_RETRY),
                        "declined",
                        declined,
                        ledgerCheck())
                .threads(1)
                .pollInterval(POLL)
                .build()
                .start()) {
            await(failed, "the job failed for good");
        }
        Job job = queue.find(dsl, id).orElseThrow();
        assertThat(job.status()).isEqualTo(JobStatus.FAILED);
        assertThat(job.attempts()).isEqualTo(2);
        assertThat(job.lastError()).contains("IllegalStateException", "card declined for " + gidOf(id));
        assertThat(results()).isEmpty();
        assertThat(effects()).isEmpty();
    }

    @Test
    void aHandlerThatThrowsRollsBackBeforePrepareAndTheSideEffectDoesNotRun() throws Exception {
        long id = queue.enqueue(
                dsl, NewJob.builder("handler", "charge").maxAttempts(3).build());
        List<Integer> sideEffectsAtAttempt = new CopyOnWriteArrayList<>();
        CountDownLatch committed = new CountDownLatch(1);
        TwoPhaseJobHandler firstTryFails = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                tx.execute("INSERT INTO twophase_results VALUES (?)", job.id());
                if (job.attempts() == 1) {
                    throw new IllegalStateException("order not found yet");
                }
            }

            @Override
            public void performSideEffect(PreparedJob job) {
                sideEffectsAtAttempt.add(job.job().attempts());
                recordEffect(job);
            }
        };
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        new JobQueue(observed(counting(JobEvent.COMPLETED, committed)), FAST_RETRY),
                        "handler",
                        firstTryFails,
                        ledgerCheck())
                .threads(1)
                .pollInterval(POLL)
                .build()
                .start()) {
            await(committed, "the job committed on its second attempt");
        }
        assertThat(sideEffectsAtAttempt).containsExactly(2);
        assertThat(results()).containsExactly(entry(id, 1));
        assertThat(effects()).containsExactly(entry(id, 1));
    }

    @Test
    void aTransactionThatSentNotifyCannotBePreparedAndTheAttemptIsCounted() throws Exception {
        long id = queue.enqueue(
                dsl, NewJob.builder("notify", "charge").maxAttempts(1).build());
        CountDownLatch failed = new CountDownLatch(1);
        TwoPhaseJobHandler notifying = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                // what JobQueue.enqueue with WakeUp.IN_TRANSACTION sends
                tx.execute("SELECT pg_notify('locksmith_jobs', 'elsewhere')");
            }

            @Override
            public void performSideEffect(PreparedJob job) {
                recordEffect(job);
            }
        };
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        observed(counting(JobEvent.FAILED, failed)), "notify", notifying, ledgerCheck())
                .threads(1)
                .pollInterval(POLL)
                .build()
                .start()) {
            await(failed, "the job failed");
        }
        Job job = queue.find(dsl, id).orElseThrow();
        assertThat(job.status()).isEqualTo(JobStatus.FAILED);
        assertThat(job.lastError())
                .contains("cannot PREPARE a transaction that has executed LISTEN, UNLISTEN, or NOTIFY");
        assertThat(effects()).isEmpty();
    }

    @Test
    void jobsEnqueuedByTheHandlerCommitWithTheJobAndWakeTheirWorkersAfterCommitPrepared() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("chain", "charge"));
        CountDownLatch committed = new CountDownLatch(1);
        TwoPhaseJobHandler chaining = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                // the default wake-up: a NOTIFY in here would keep the transaction from being prepared
                queue.enqueue(
                        tx,
                        NewJob.builder("receipts", "send")
                                .uniqueKey("receipt-" + job.id())
                                .build());
            }

            @Override
            public void performSideEffect(PreparedJob job) {
                recordEffect(job);
            }
        };
        try (Connection listener = pool.getConnection()) {
            try (Statement s = listener.createStatement()) {
                s.execute("LISTEN " + JobQueue.CHANNEL);
            }
            try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                            observed(counting(JobEvent.COMPLETED, committed)), "chain", chaining, ledgerCheck())
                    .threads(1)
                    .pollInterval(POLL)
                    .build()
                    .start()) {
                await(committed, "the job committed");
            }
            List<String> woken = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
            while (!woken.contains("receipts") && System.nanoTime() < deadline) {
                PGNotification[] received = listener.unwrap(PGConnection.class).getNotifications(100);
                if (received != null) {
                    Arrays.stream(received).map(PGNotification::getParameter).forEach(woken::add);
                }
            }
            assertThat(woken).as("the follow-up job's queue was woken").contains("receipts");
            try (Statement s = listener.createStatement()) {
                s.execute("UNLISTEN *");
            }
        }
        assertThat(dsl.fetchCount(JOBS, JOBS.QUEUE.eq("receipts").and(JOBS.UNIQUE_KEY.eq("receipt-" + id))))
                .isEqualTo(1);
        assertThat(effects()).containsExactly(entry(id, 1));
    }

    @Test
    void closeLetsTheJobInHandFinishAndLeavesNothingPrepared() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("closing", "charge"));
        CountDownLatch inSideEffect = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        TwoPhaseJobHandler blocking = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                tx.execute("INSERT INTO twophase_results VALUES (?)", job.id());
            }

            @Override
            public void performSideEffect(PreparedJob job) throws InterruptedException {
                inSideEffect.countDown();
                assertThat(release.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
                recordEffect(job);
            }
        };
        TwoPhaseWorker worker = TwoPhaseWorker.builder(pool, "closing", blocking, ledgerCheck())
                .threads(1)
                .pollInterval(POLL)
                .build()
                .start();
        await(inSideEffect, "the side effect started");
        Thread closer = new Thread(worker::close, "closer");
        closer.start();
        release.countDown();
        closer.join(TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
        assertThat(closer.isAlive()).as("close() returned").isFalse();
        assertThat(worker.liveThreads()).isZero();
        assertThat(preparedGids(dsl)).isEmpty();
        assertThat(queue.find(dsl, id)).isEmpty();
        assertThat(results()).containsExactly(entry(id, 1));
        assertThat(effects()).containsExactly(entry(id, 1));
    }

    @Test
    void withEveryPreparedTransactionSlotTakenTheJobWaitsUncountedUntilOneIsFree() throws Exception {
        assumeTrue(
                TestPostgres.server().source() != Source.EXPLICIT,
                "fills every prepared-transaction slot of the server: only on a server the tests started");
        long id = queue.enqueue(
                dsl, NewJob.builder("full", "charge").maxAttempts(1).build());
        List<String> fillers = new java.util.ArrayList<>();
        try (var c = pool.getConnection()) {
            DSLContext filler = DSL.using(c);
            c.setAutoCommit(false);
            for (int i = 0; i < maxPreparedTransactions(dsl); i++) {
                filler.execute("SELECT 1");
                String gid = "test-filler-" + i;
                filler.execute("PREPARE TRANSACTION {0}", DSL.inline(gid));
                fillers.add(gid);
            }
            c.setAutoCommit(true);
        }
        CountDownLatch refused = new CountDownLatch(1);
        CountDownLatch committed = new CountDownLatch(1);
        LocksmithObserver observer = new LocksmithObserver() {
            @Override
            public Observation start(Operation operation) {
                return new Observation() {
                    @Override
                    public void end(Outcome outcome) {}

                    @Override
                    public void error(Throwable error) {
                        if (error instanceof LocksmithException e && "53200".equals(e.sqlState())) {
                            refused.countDown();
                        }
                    }
                };
            }

            @Override
            public void jobEvent(JobEvent event, Job job) {
                if (event == JobEvent.COMPLETED) {
                    committed.countDown();
                }
            }
        };
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(observed(observer), "full", recording(), ledgerCheck())
                .threads(1)
                .listen(false)
                .pollInterval(POLL)
                .build()
                .start()) {
            await(refused, "PREPARE TRANSACTION refused: no slot");
            Job waiting = queue.find(dsl, id).orElseThrow();
            assertThat(waiting.status()).isEqualTo(JobStatus.PENDING);
            assertThat(waiting.attempts())
                    .as("not counted against maxAttempts(1)")
                    .isZero();
            dsl.execute("ROLLBACK PREPARED {0}", DSL.inline(fillers.remove(0)));
            await(committed, "the job committed once a slot was free");
        } finally {
            for (String gid : fillers) {
                dsl.execute("ROLLBACK PREPARED {0}", DSL.inline(gid));
            }
        }
        assertThat(results()).containsExactly(entry(id, 1));
        assertThat(effects()).containsExactly(entry(id, 1));
    }

    @Test
    void aJobWhoseWorkerDiedBeforeRecordingItsLastAttemptIsFailedByTheNextClaim() throws Exception {
        long id = queue.enqueue(
                dsl, NewJob.builder("died", "charge").maxAttempts(2).build());
        // what a claim of its last attempt leaves when its worker dies before PREPARE, once the hold ran out
        dsl.execute("UPDATE locksmith.jobs SET attempts = 2, last_error = 'timeout' WHERE id = ?", id);
        CountDownLatch failed = new CountDownLatch(1);
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        observed(counting(JobEvent.FAILED, failed)), "died", recording(), ledgerCheck())
                .threads(1)
                .pollInterval(POLL)
                .build()
                .start()) {
            await(failed, "the job failed for good");
        }
        Job job = queue.find(dsl, id).orElseThrow();
        assertThat(job.status()).isEqualTo(JobStatus.FAILED);
        assertThat(job.attempts()).isEqualTo(2);
        assertThat(job.lastError()).contains("last attempt (2 of 2) did not finish", "before: timeout");
        assertThat(results()).isEmpty();
        assertThat(effects()).isEmpty();
    }
}

package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TwoPhaseSeams;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A two-phase worker whose hold ran out between its claim and the transaction that takes the job
 * must leave the job to whoever claimed it since. That claimer may have snoozed or released it,
 * which gives the attempt back: the attempts then read as the first claim left them, and only the
 * fence (which every claim raises and nothing lowers) tells the stale worker apart.
 */
class TwoPhaseStaleClaimTest extends TwoPhaseTest {

    @Test
    void aWorkerWhoseHoldRanOutLeavesAJobAnotherClaimerSnoozedThoughItsAttemptsMatchAgain() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("stale", "charge"));
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicReference<Job> asClaimed = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        AtomicReference<Outcome> outcome = new AtomicReference<>();
        LocksmithObserver handling = firstOutcome(outcome, ended, new CountDownLatch(0));
        try (TwoPhaseWorker worker = TwoPhaseSeams.beforeTake(
                        TwoPhaseWorker.builder(observed(handling), "stale", recording(), ledgerCheck())
                                .threads(1)
                                .pollInterval(Duration.ofMillis(50)),
                        job -> {
                            if (asClaimed.compareAndSet(null, job)) {
                                claimed.countDown();
                                assertThat(proceed.await(TIMEOUT_SECONDS, TimeUnit.SECONDS))
                                        .isTrue();
                            }
                        })
                .build()
                .start()) {
            await(claimed, "the worker claimed the job");
            Job first = asClaimed.get();
            // The hold runs out (a minute at least; moved here by hand), another claimer takes the
            // job and snoozes it for an hour, which gives its attempt back.
            dsl.execute("UPDATE locksmith.jobs SET run_at = now() WHERE id = ?", id);
            List<Job> other = queue.claim("stale", 1, Duration.ofMinutes(5), "other-claimer");
            assertThat(other).extracting(Job::id).containsExactly(id);
            assertThat(queue.settle(dsl, other.get(0), JobControl.snooze(Duration.ofHours(1)))
                            .outcome())
                    .isEqualTo(FailResult.Outcome.SNOOZED);
            Job snoozed = queue.find(dsl, id).orElseThrow();
            assertThat(snoozed.attempts())
                    .as("the snooze gave the attempt back: attempts alone would match the stale claim")
                    .isEqualTo(first.attempts());
            assertThat(dsl.fetchCount(
                            JOBS,
                            JOBS.ID.eq(id).and(JOBS.STATUS.eq("pending")).and(JOBS.ATTEMPTS.eq(first.attempts()))))
                    .as("what a take matching attempts alone would lock and delete")
                    .isEqualTo(1);
            assertThat(snoozed.fence()).isGreaterThan(first.fence());

            proceed.countDown();
            await(ended, "the stale worker's attempt ended");
            assertThat(outcome.get()).isEqualTo(Outcome.LEASE_LOST);
        }
        Job after = queue.find(dsl, id).orElseThrow();
        assertThat(after.status()).as("the snoozed job is still there").isEqualTo(JobStatus.PENDING);
        assertThat(dsl.fetchValue("SELECT run_at > now() + interval '30 minutes' FROM locksmith.jobs WHERE id = ?", id))
                .as("and still snoozed")
                .isEqualTo(true);
        assertThat(results()).as("the stale worker's handler never ran").isEmpty();
        assertThat(effects()).isEmpty();
    }
}

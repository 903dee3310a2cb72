package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Backoff;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.ForgedJobs;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.QueueStats;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Single-threaded behaviour of the queue, its ordering, and its refusals. */
class JobQueueTest extends DatabaseTest {

    private JobQueue queue;

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_HISTORY).execute();
        queue = new JobQueue(
                dsl,
                JobQueueConfig.builder()
                        .retryBackoff(new Backoff(Duration.ofMillis(100), Duration.ofSeconds(10), 2.0, 0.0))
                        .build());
    }

    private List<Long> claimAllInTransaction(String q) {
        return dsl.transactionResult(c ->
                queue.claimInTransaction(c.dsl(), q, 100).stream().map(Job::id).toList());
    }

    @Test
    void rejectsBadInputAndWritesNothing() {
        assertThatThrownBy(() -> NewJob.of("", "k")).hasMessageContaining("queue");
        assertThatThrownBy(() -> NewJob.of(" ", "k")).hasMessageContaining("queue");
        assertThatThrownBy(() -> NewJob.of("q", null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> NewJob.builder("q", "k").priority(1001).build())
                .hasMessageContaining("priority");
        assertThatThrownBy(() -> NewJob.builder("q", "k").priority(-1).build()).hasMessageContaining("priority");
        assertThatThrownBy(() -> NewJob.builder("q", "k").payload("{not json").build())
                .hasMessageContaining("JSON");
        assertThatThrownBy(() -> NewJob.builder("q", "k").maxAttempts(0).build())
                .hasMessageContaining("maxAttempts");
        assertThatThrownBy(() ->
                        NewJob.builder("q", "k").delay(Duration.ofSeconds(-1)).build())
                .hasMessageContaining("delay");
        assertThatThrownBy(() -> Claim.of("q", 0)).hasMessageContaining("limit");
        assertThatThrownBy(() -> queue.claim("q", 1, Duration.ZERO, "w")).hasMessageContaining("lease");
        assertThatThrownBy(() -> queue.claim("q", 1, Duration.ofSeconds(1), "")).hasMessageContaining("workerId");
        assertThatThrownBy(() -> queue.enqueueAll(dsl, java.util.Arrays.asList(NewJob.of("q", "k"), null)))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> queue.deleteFinishedOlderThan(Duration.ofDays(1), 0))
                .hasMessageContaining("batchSize");
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void transactionalClaimNeedsAnOpenTransaction() {
        queue.enqueue(dsl, NewJob.of("q", "k"));
        assertThatThrownBy(() -> queue.claimInTransaction(dsl, "q", 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("open transaction");
        assertThat(dsl.fetchCount(JOBS)).isEqualTo(1);
    }

    @Test
    void claimsByPriorityThenRunAtThenIdAndNeverEarly() {
        long late = queue.enqueue(dsl, NewJob.builder("q", "k").priority(100).build());
        long first = queue.enqueue(dsl, NewJob.builder("q", "k").priority(5).build());
        long second = queue.enqueue(dsl, NewJob.builder("q", "k").priority(5).build());
        long future = queue.enqueue(
                dsl,
                NewJob.builder("q", "k").priority(0).delay(Duration.ofHours(1)).build());
        // an earlier run_at wins over a lower id at equal priority
        dsl.update(JOBS)
                .set(JOBS.RUN_AT, DSL.currentOffsetDateTime().minus(1))
                .where(JOBS.ID.eq(second))
                .execute();
        queue.enqueue(dsl, NewJob.of("other", "k"));

        assertThat(claimAllInTransaction("q")).containsExactly(second, first, late);
        assertThat(dsl.fetchValues(JOBS.ID, JOBS.QUEUE.eq("q"))).containsExactly(future);
    }

    @Test
    void batchEnqueueReturnsIdsInOrderAndShardsFilterClaims() {
        List<Long> ids = queue.enqueueAll(
                dsl,
                List.of(
                        NewJob.builder("q", "a").shard(1).build(),
                        NewJob.builder("q", "b").shard(2).payload("{\"n\": 2}").build(),
                        NewJob.builder("q", "c").shard(3).build()));
        assertThat(ids).isSorted().doesNotHaveDuplicates();
        assertThat(dsl.fetchValue(JOBS.KIND, JOBS.ID.eq(ids.get(1)))).isEqualTo("b");

        List<Job> claimed = queue.claim(Claim.of("q", 10).onShards(Set.of(1, 3)), Duration.ofMinutes(1), "w");
        assertThat(claimed).extracting(Job::id).containsExactly(ids.get(0), ids.get(2));
        assertThat(queue.find(dsl, ids.get(1)).orElseThrow().payload()).isEqualTo("{\"n\": 2}");
    }

    @Test
    void uniqueKeyReturnsTheLiveJobAndIsFreedWhenItFinishes() {
        long id = queue.enqueue(dsl, NewJob.builder("q", "k").uniqueKey("u").build());
        assertThat(queue.enqueue(dsl, NewJob.builder("q", "k").uniqueKey("u").build()))
                .isEqualTo(id);
        List<Long> batch = queue.enqueueAll(
                dsl,
                List.of(
                        NewJob.builder("q", "k").uniqueKey("u").build(),
                        NewJob.builder("q", "k").uniqueKey("v").build(),
                        NewJob.builder("q", "k").uniqueKey("v").build()));
        assertThat(batch.get(0)).isEqualTo(id);
        assertThat(batch.get(1)).isEqualTo(batch.get(2)).isNotEqualTo(id);
        assertThat(queue.enqueue(
                        dsl, NewJob.builder("other", "k").uniqueKey("u").build()))
                .isNotEqualTo(id);

        Job leased = queue.claim(Claim.of("q", 1), Duration.ofMinutes(1), "w").get(0);
        assertThat(leased.id()).isEqualTo(id);
        assertThat(queue.enqueue(dsl, NewJob.builder("q", "k").uniqueKey("u").build()))
                .isEqualTo(id);
        assertThat(queue.complete(dsl, leased)).isTrue();
        assertThat(queue.enqueue(dsl, NewJob.builder("q", "k").uniqueKey("u").build()))
                .isNotEqualTo(id);
    }

    @Test
    void leaseTransitionsCheckOwnership() {
        long id = queue.enqueue(dsl, NewJob.of("q", "k"));
        Job mine = queue.claim("q", 1, Duration.ofMinutes(1), "me").get(0);
        assertThat(mine.status()).isEqualTo(JobStatus.RUNNING);
        assertThat(mine.attempts()).isEqualTo(1);
        // the same id, worker and attempt as the real lease, but not its lease id
        Job forged = withLease(mine, UUID.randomUUID());

        assertThat(queue.heartbeat(forged, Duration.ofMinutes(5))).isFalse();
        assertThat(queue.complete(dsl, forged)).isFalse();
        assertThat(queue.fail(dsl, forged, "x").outcome()).isEqualTo(FailResult.Outcome.LEASE_LOST);
        assertThat(queue.heartbeat(mine, Duration.ofMinutes(5))).isTrue();
        assertThat(queue.cancel(dsl, id)).isTrue();
        assertThat(queue.complete(dsl, mine)).isFalse();
        assertThat(queue.cancel(dsl, id)).isFalse();
        assertThat(queue.find(dsl, id).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
        Job unleased = queue.find(dsl, id).orElseThrow();
        assertThatThrownBy(() -> queue.complete(dsl, unleased)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void retryPutsAFailedJobBackWithOneMoreAttemptAndDeleteFinishedRemovesOnlyFinishedJobs() {
        long id = queue.enqueue(dsl, NewJob.builder("q", "k").maxAttempts(1).build());
        Job leased = queue.claim("q", 1, Duration.ofMinutes(1), "w").get(0);
        assertThat(queue.fail(dsl, leased, "boom").outcome()).isEqualTo(FailResult.Outcome.FAILED);
        assertThat(queue.deleteFinished(dsl, id + 1000)).isFalse();

        boolean retried = dsl.transactionResult(c -> queue.retry(c.dsl(), id));
        assertThat(retried).isTrue();
        Job pending = queue.find(dsl, id).orElseThrow();
        assertThat(pending.status()).isEqualTo(JobStatus.PENDING);
        assertThat(pending.attempts()).isEqualTo(1);
        assertThat(pending.maxAttempts()).isEqualTo(2);
        assertThat(pending.lastError()).isEqualTo("boom");
        assertThat(dsl.select(JOBS.FINISHED_AT).from(JOBS).where(JOBS.ID.eq(id)).fetchOne(JOBS.FINISHED_AT))
                .isNull();
        assertThat(queue.retry(dsl, id)).as("a pending job is not retried").isFalse();
        assertThat(queue.deleteFinished(dsl, id))
                .as("a live job is not deleted")
                .isFalse();

        Job again = queue.claim("q", 1, Duration.ofMinutes(1), "w").get(0);
        assertThat(again.id()).isEqualTo(id);
        assertThat(queue.complete(dsl, again)).isTrue();
        assertThat(queue.retry(dsl, id))
                .as("a completed job is gone without keepCompleted")
                .isFalse();

        long cancelled = queue.enqueue(dsl, NewJob.of("q", "k"));
        assertThat(queue.cancel(dsl, cancelled)).isTrue();
        assertThatThrownBy(() -> dsl.transaction(c -> {
                    assertThat(queue.deleteFinished(c.dsl(), cancelled)).isTrue();
                    throw new IllegalStateException("roll back");
                }))
                .hasMessageContaining("roll back");
        assertThat(queue.find(dsl, cancelled))
                .as("the deletion rolled back with the transaction")
                .isPresent();
        assertThat(queue.deleteFinished(dsl, cancelled)).isTrue();
        assertThat(queue.find(dsl, cancelled)).isEmpty();
    }

    @Test
    void completeAllFinishesManyJobsInOneStatementAndKeepsThemWhenConfigured() {
        JobQueue keeping =
                new JobQueue(dsl, JobQueueConfig.builder().keepCompleted(true).build());
        keeping.enqueueAll(dsl, List.of(NewJob.of("q", "k"), NewJob.of("q", "k"), NewJob.of("q", "k")));
        List<Job> leased = keeping.claim("q", 3, Duration.ofMinutes(1), "w");
        int completed = dsl.transactionResult(c -> keeping.completeAll(c.dsl(), leased));
        assertThat(completed).isEqualTo(3);
        assertThat(dsl.fetchCount(JOBS))
                .as("completed rows leave the jobs table")
                .isZero();
        assertThat(dsl.fetchValues(JOB_HISTORY.STATUS)).containsExactly("done", "done", "done");
        assertThat(keeping.completeAll(dsl, leased)).isZero();

        assertThat(keeping.deleteFinishedOlderThan(Duration.ofHours(1), 2)).isZero();
        assertThat(keeping.deleteFinishedOlderThan(Duration.ZERO, 2)).isEqualTo(3);
        assertThat(dsl.fetchCount(JOB_HISTORY)).isZero();
    }

    @Test
    void completeAllAppliesOnlyTheTokensStillHeldInAMixedBatch() {
        queue.enqueueAll(dsl, List.of(NewJob.of("q", "k"), NewJob.of("q", "k"), NewJob.of("q", "k")));
        List<Job> leased = queue.claim("q", 3, Duration.ofMinutes(1), "w");
        Job held = leased.get(0);
        Job otherLease = withLease(leased.get(1), UUID.randomUUID());
        // a lease id that is real, but another job's: the pair must match, not each half
        Job swapped = withLease(leased.get(2), held.leaseId());
        int completed = dsl.transactionResult(c -> queue.completeAll(c.dsl(), List.of(held, otherLease, swapped)));
        assertThat(completed).isEqualTo(1);
        assertThat(queue.find(dsl, held.id())).isEmpty();
        assertThat(dsl.fetchValues(JOBS.ID))
                .containsExactlyInAnyOrder(leased.get(1).id(), leased.get(2).id());
        assertThat(queue.completeAll(dsl, leased.subList(1, 3))).isEqualTo(2);
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    private static Job withLease(Job job, UUID leaseId) {
        return ForgedJobs.withLease(job, leaseId);
    }

    @Test
    void statsCountPerQueueAndStatus() {
        queue.enqueueAll(dsl, List.of(NewJob.of("a", "k"), NewJob.of("a", "k"), NewJob.of("b", "k")));
        queue.claim("a", 1, Duration.ofMinutes(1), "w");
        List<QueueStats> stats = queue.stats();
        assertThat(stats).extracting(QueueStats::queue).containsExactly("a", "b");
        assertThat(stats.get(0).count(JobStatus.PENDING)).isEqualTo(1);
        assertThat(stats.get(0).count(JobStatus.RUNNING)).isEqualTo(1);
        assertThat(stats.get(0).count(JobStatus.FAILED)).isZero();
        assertThat(stats.get(1).oldestDuePendingAge()).isPresent();
    }
}

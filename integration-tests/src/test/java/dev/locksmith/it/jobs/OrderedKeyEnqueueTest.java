package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Producers of one ordering key are serialized until each one's transaction ends, so that ids
 * within a key follow commit order: the claim's head test, judged in a snapshot, is then never
 * fooled by a lower id that commits later. The hazard is shown with plain inserts, which bypass
 * the lock: two jobs of one key held by two claimers at once.
 */
class OrderedKeyEnqueueTest extends DatabaseTest {

    private JobQueue queue;

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(dsl);
    }

    private static NewJob keyed(String q, String key) {
        return NewJob.builder(q, "k").orderingKey(key).build();
    }

    /** Advisory locks held by a backend, as {@code mode:granted}. */
    private List<String> advisoryLocks(int pid) {
        return dsl
                .fetchValues(
                        "SELECT mode || ':' || granted FROM pg_locks WHERE locktype = 'advisory' AND pid = ? "
                                + "ORDER BY mode",
                        pid)
                .stream()
                .map(String::valueOf)
                .toList();
    }

    /** Waits (bounded) until some backend waits for an advisory lock. */
    private void awaitAnAdvisoryLockWaiter() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (dsl.fetchCount(dsl.selectOne().from("pg_locks").where("locktype = 'advisory' AND NOT granted")) == 0) {
            assertThat(System.nanoTime()).as("a producer waits for the key").isLessThan(deadline);
            dsl.execute("SELECT pg_sleep(0.01)");
        }
    }

    @Test
    void aSecondProducerOfAKeyWaitsUntilTheFirstCommitsWhileOtherKeysDoNot() throws Exception {
        List<Long> first = new ArrayList<>();
        CompletableFuture<Long> second;
        try (HeldTransaction producer =
                HeldTransaction.start(dsl, tx -> first.add(queue.enqueue(tx, keyed("q", "a"))))) {
            assertThat(advisoryLocks(producer.backendPid()))
                    .as("the queue's lock shared, the key's exclusive")
                    .containsExactly("ExclusiveLock:true", "ShareLock:true");
            // another key of the same queue goes straight in (auto-commit: a transaction of its own)
            long other = queue.enqueue(dsl, keyed("q", "b"));
            assertThat(queue.find(dsl, other)).isPresent();

            second = CompletableFuture.supplyAsync(() -> queue.enqueue(dsl, keyed("q", "a")));
            awaitAnAdvisoryLockWaiter();
            assertThat(second).isNotDone();
            producer.commit();
        }
        long secondId = second.get(30, TimeUnit.SECONDS);
        assertThat(secondId).isGreaterThan(first.get(0));
        // in enqueue order: the first producer's job is the head
        List<Job> claimed = queue.claim("q", 10, java.time.Duration.ofMinutes(1), "w");
        assertThat(claimed).extracting(Job::id).contains(first.get(0)).doesNotContain(secondId);
    }

    @Test
    void jobsWithoutAKeyTakeNoLockAndABulkCallOfManyKeysTakesOneOnItsQueue() throws Exception {
        try (HeldTransaction plain = HeldTransaction.start(dsl, tx -> queue.enqueue(tx, NewJob.of("q", "k")))) {
            assertThat(advisoryLocks(plain.backendPid())).isEmpty();
            plain.commit();
        }
        List<NewJob> bulk = new ArrayList<>();
        for (int k = 0; k < 100; k++) {
            bulk.add(keyed("bulk", "key-" + k));
        }
        CompletableFuture<Long> waiting;
        try (HeldTransaction producer = HeldTransaction.start(dsl, tx -> queue.enqueueAll(tx, bulk))) {
            assertThat(advisoryLocks(producer.backendPid())).containsExactly("ExclusiveLock:true");
            // a keyed producer of another queue is not held up
            queue.enqueue(dsl, keyed("other", "key-1"));
            // one of the same queue waits, whatever its key
            waiting = CompletableFuture.supplyAsync(() -> queue.enqueue(dsl, keyed("bulk", "key-new")));
            awaitAnAdvisoryLockWaiter();
            assertThat(waiting).isNotDone();
            producer.commit();
        }
        assertThat(waiting.get(30, TimeUnit.SECONDS)).isPositive();
        assertThat(dsl.fetchCount(JOBS, JOBS.QUEUE.eq("bulk"))).isEqualTo(101);
    }

    /**
     * Without the lock (plain inserts, as a producer bypassing {@link JobQueue#enqueue} would
     * write): the lower id commits after the higher one, the first claimer takes the higher id as
     * the head, and once the lower id commits a second claimer takes it while the first still
     * holds its job. This is the interleaving the enqueue's lock makes impossible: the second
     * producer could not have inserted, let alone committed, before the first committed.
     */
    @Test
    void withoutTheLockALowerIdCommittingLaterLetsTwoClaimersHoldOneKey() throws Exception {
        String insert = "INSERT INTO locksmith.jobs (queue, kind, ordering_key) VALUES ('raw', 'k', 'a') RETURNING id";
        List<Long> ids = new ArrayList<>();
        try (HeldTransaction early = HeldTransaction.start(dsl, tx -> ids.add(fetchId(tx, insert)))) {
            long late = fetchId(dsl, insert);
            assertThat(late).isGreaterThan(ids.get(0));
            List<Long> firstHolds = new ArrayList<>();
            try (HeldTransaction firstClaimer = HeldTransaction.start(
                    dsl, tx -> queue.claimInTransaction(tx, "raw", 10).forEach(j -> firstHolds.add(j.id())))) {
                assertThat(firstHolds).containsExactly(late);
                early.commit();
                List<Long> secondHolds = new ArrayList<>();
                try (HeldTransaction secondClaimer = HeldTransaction.start(
                        dsl, tx -> queue.claimInTransaction(tx, "raw", 10).forEach(j -> secondHolds.add(j.id())))) {
                    assertThat(secondHolds).as("two jobs of key a held at once").containsExactly(ids.get(0));
                    secondClaimer.rollback();
                }
                firstClaimer.rollback();
            }
        }
    }

    private static long fetchId(DSLContext ctx, String sql) {
        return ctx.fetchOne(sql).get(0, Long.class);
    }
}

package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a claim takes when jobs have ordering keys: only the head of each key (no pending or
 * running job of the key with a lower id), in both modes; the next job once the head is gone;
 * nothing of a key whose head is held by an open transactional claim or running under a lease;
 * jobs without a key as before.
 */
class OrderedKeyClaimTest extends DatabaseTest {

    private static final Duration LEASE = Duration.ofMinutes(5);

    private JobQueue queue;

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(dsl);
    }

    private long keyed(String q, String key) {
        return queue.enqueue(dsl, NewJob.builder(q, "k").orderingKey(key).build());
    }

    /** Claims in a transaction of its own, which commits. */
    private List<Long> claimInTransaction(String q, int n) {
        return dsl.transactionResult(c -> ids(queue.claimInTransaction(c.dsl(), q, n)));
    }

    private static List<Long> ids(List<Job> jobs) {
        return jobs.stream().map(Job::id).toList();
    }

    @Test
    void aLeasedClaimTakesOnlyTheHeadOfEachKeyAndTheNextOnceTheHeadIsDone() {
        long a1 = keyed("o", "a");
        long a2 = keyed("o", "a");
        long b1 = keyed("o", "b");
        long a3 = keyed("o", "a");
        long free1 = queue.enqueue(dsl, NewJob.of("o", "k"));
        long free2 = queue.enqueue(dsl, NewJob.of("o", "k"));

        List<Job> first = queue.claim("o", 10, LEASE, "w");
        assertThat(ids(first)).containsExactly(a1, b1, free1, free2);
        assertThat(first).extracting(Job::orderingKey).containsExactly("a", "b", null, null);
        // a1 runs: a2 and a3 are not heads, whatever the limit
        assertThat(queue.claim("o", 10, LEASE, "w")).isEmpty();

        dsl.transaction(c -> assertThat(queue.complete(c.dsl(), first.get(0))).isTrue());
        List<Job> second = queue.claim("o", 10, LEASE, "w");
        assertThat(ids(second)).containsExactly(a2);
        dsl.transaction(c -> queue.completeAll(c.dsl(), second));
        assertThat(ids(queue.claim("o", 10, LEASE, "w"))).containsExactly(a3);
    }

    @Test
    void aHeadHeldByAnOpenTransactionalClaimKeepsItsKeyFromEveryOtherClaimer() throws Exception {
        long a1 = keyed("o", "a");
        long a2 = keyed("o", "a");
        long b1 = keyed("o", "b");
        List<Long> held = new ArrayList<>();
        try (HeldTransaction holder =
                HeldTransaction.start(dsl, tx -> held.addAll(ids(queue.claimInTransaction(tx, Claim.of("o", 1)))))) {
            assertThat(held).containsExactly(a1);
            // a1 is deleted but not committed: still live to everyone else, and locked
            List<Long> other = claimInTransaction("o", 10);
            assertThat(other).containsExactly(b1);
            assertThat(queue.claim("o", 10, LEASE, "w")).isEmpty();
            holder.rollback();
        }
        // rolled back: a1 is the head again, a2 still waits
        assertThat(claimInTransaction("o", 10)).containsExactly(a1);
        assertThat(claimInTransaction("o", 10)).containsExactly(a2);
    }

    @Test
    void aRunningHeadKeepsItsKeyFromTransactionalClaims() {
        long a1 = keyed("o", "a");
        keyed("o", "a");
        long b1 = keyed("o", "b");
        assertThat(ids(queue.claim(Claim.of("o", 1), LEASE, "w"))).containsExactly(a1);
        assertThat(claimInTransaction("o", 10)).containsExactly(b1);
    }

    @Test
    void priorityAndDelayDoNotReorderJobsWithinAKey() {
        long a1 = queue.enqueue(
                dsl, NewJob.builder("o", "k").orderingKey("a").priority(1000).build());
        keyed("o", "a");
        queue.enqueue(dsl, NewJob.builder("o", "k").orderingKey("a").priority(0).build());
        long d1 = queue.enqueue(
                dsl,
                NewJob.builder("o", "k")
                        .orderingKey("d")
                        .delay(Duration.ofHours(1))
                        .build());
        keyed("o", "d");

        // a1 comes first despite its priority; d1 is not due and holds d2 back
        assertThat(ids(queue.claim("o", 10, LEASE, "w"))).containsExactly(a1);
        assertThat(queue.find(dsl, d1)).isPresent();
    }

    @Test
    void cancellingTheHeadLetsTheNextJobOfItsKeyGo() {
        long a1 = keyed("o", "a");
        long a2 = keyed("o", "a");
        boolean cancelled = dsl.transactionResult(c -> queue.cancel(c.dsl(), a1));
        assertThat(cancelled).isTrue();
        assertThat(ids(queue.claim("o", 10, LEASE, "w"))).containsExactly(a2);
    }

    @Test
    void keysBelongToTheirQueueAndTheHeadIsJudgedAcrossShards() {
        long a1 = keyed("o", "a");
        long other = keyed("p", "a");
        assertThat(ids(queue.claim("p", 10, LEASE, "w"))).containsExactly(other);

        long s1 = queue.enqueue(
                dsl, NewJob.builder("s", "k").orderingKey("x").shard(1).build());
        long s2 = queue.enqueue(
                dsl, NewJob.builder("s", "k").orderingKey("x").shard(0).build());
        assertThat(queue.claim(Claim.of("s", 10).onShards(Set.of(0)), LEASE, "w"))
                .isEmpty();
        assertThat(ids(queue.claim(Claim.of("s", 10).onShards(Set.of(1)), LEASE, "w")))
                .containsExactly(s1);
        assertThat(ids(queue.claim("o", 10, LEASE, "w"))).containsExactly(a1);
        assertThat(queue.find(dsl, s2)).isPresent();
    }

    @Test
    void jobsWithoutAKeyAreClaimedAsBefore() {
        List<Long> free = queue.enqueueAll(dsl, Collections.nCopies(5, NewJob.of("o", "k")));
        assertThat(ids(queue.claim("o", 3, LEASE, "w"))).containsExactlyElementsOf(free.subList(0, 3));
        assertThat(claimInTransaction("o", 10)).containsExactlyElementsOf(free.subList(3, 5));
    }

    @Test
    void theOrderingKeyIsValidatedAndReadBack() {
        assertThatThrownBy(() -> NewJob.builder("o", "k").orderingKey(" ").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("orderingKey");
        assertThatThrownBy(() ->
                        NewJob.builder("o", "k").orderingKey("x".repeat(257)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("orderingKey");
        NewJob longest = NewJob.builder("o", "k").orderingKey("x".repeat(256)).build();
        long id = queue.enqueue(dsl, longest);
        assertThat(queue.find(dsl, id).orElseThrow().orderingKey()).isEqualTo("x".repeat(256));
        assertThat(NewJob.of("o", "k").orderingKey()).isEmpty();
    }

    /**
     * PgJDBC server-prepares the claim after a few uses and PostgreSQL may then plan it
     * generically: the head test must still be a probe of the ordering-key index, not a scan.
     */
    @Test
    void theGenericPlanOfAClaimProbesTheOrderingKeyIndex() {
        dsl.execute("INSERT INTO locksmith.jobs (queue, kind, status, finished_at, ordering_key) "
                + "SELECT 'generic', 'k', 'done', now(), 'key-' || (i % 100) FROM generate_series(1, 20000) i");
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            jobs.add(
                    NewJob.builder("generic", "k").orderingKey("key-" + (i % 4)).build());
        }
        queue.enqueueAll(dsl, jobs);
        dsl.execute("ANALYZE locksmith.jobs");
        try (var one = TestPostgres.pool(database, 1)) {
            DSLContext single = DSL.using(one, SQLDialect.POSTGRES);
            JobQueue onOne = new JobQueue(single);
            for (int i = 0; i < 10; i++) {
                single.transaction(c -> assertThat(onOne.claimInTransaction(c.dsl(), "generic", 1))
                        .hasSize(1));
            }
            List<String> plan = single.transactionResult(c -> {
                String name = c.dsl()
                        .fetchOne("SELECT name FROM pg_prepared_statements "
                                + "WHERE statement LIKE 'delete from %jobs%' AND from_sql = false")
                        .get(0, String.class);
                c.dsl().execute("SET LOCAL plan_cache_mode = force_generic_plan");
                return c.dsl()
                        .fetch("EXPLAIN EXECUTE " + c.dsl().render(DSL.name(name)) + "('generic')")
                        .getValues(0, String.class);
            });
            System.out.println("generic plan of the transactional claim:\n  " + String.join("\n  ", plan));
            // every job here is in the first generation's partition (jobs_slot0): its indexes,
            // no scan of its rows (the empty partitions may be scanned: nothing to step over)
            assertThat(String.join("\n", plan))
                    .contains("jobs_slot0_claimable_idx", "jobs_slot0_ordering_key_live_idx")
                    .doesNotContain("Seq Scan on jobs_slot0");
        }
    }
}

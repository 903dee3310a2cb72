package dev.locksmith.it;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;
import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Fencing;
import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Fencing tokens: a job's and an account's number grows with every lease, under concurrent
 * claims and acquires; a write guarded by {@link Fencing} turns away a holder whose lease lapsed
 * and was taken again, where an unguarded write overwrites the newer holder's work; and the check
 * and the write cannot be split by another writer, where a check made before the write can.
 */
class FencingTest extends DatabaseTest {

    private static final int THREADS = 8;
    private static final int ROUNDS = 25;

    /** What a lease protects, outside locksmith: a row that remembers the fence of its last write. */
    private static final Table<Record> RESOURCE = DSL.table(DSL.name("fenced_resource"));

    private static final Field<Integer> ID = DSL.field(DSL.name("id"), SQLDataType.INTEGER);
    private static final Field<String> VALUE = DSL.field(DSL.name("value"), SQLDataType.VARCHAR);
    private static final Field<Long> LAST_FENCE = DSL.field(DSL.name("last_fence"), SQLDataType.BIGINT);
    private static final Table<Record> WRITES = DSL.table(DSL.name("fenced_writes"));
    private static final Field<Long> SEQ = DSL.field(DSL.name("seq"), SQLDataType.BIGINT);
    private static final Field<Long> FENCE = DSL.field(DSL.name("fence"), SQLDataType.BIGINT);

    private JobQueue queue;

    @Override
    protected int poolSize() {
        return THREADS + 4;
    }

    @BeforeEach
    void emptyTables() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_HISTORY).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
        dsl.execute("DROP TABLE IF EXISTS fenced_resource, fenced_writes");
        dsl.execute("CREATE TABLE fenced_resource (id integer PRIMARY KEY, value text, last_fence bigint)");
        dsl.execute("CREATE TABLE fenced_writes (seq bigserial PRIMARY KEY, fence bigint NOT NULL)");
        dsl.insertInto(RESOURCE, ID, VALUE).values(1, "initial").execute();
        queue = new JobQueue(dsl);
    }

    @Test
    void aJobHolderWhoseLeaseLapsedAndWasClaimedAgainIsTurnedAway() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("fenced", "sync"));
        Job first = queue.claim("fenced", 1, Duration.ofMillis(200), "paused-worker")
                .get(0);
        assertThat(first.fence()).isEqualTo(1);
        // the first holder pauses past its lease; the job is rescued and claimed by another
        Await.until("the lapsed lease rescued", Duration.ofSeconds(30), () -> queue.rescueExpired() == 1);
        Job second =
                queue.claim("fenced", 1, Duration.ofMinutes(1), "second-worker").get(0);
        assertThat(second.id()).isEqualTo(id);
        assertThat(second.fence()).isEqualTo(2);

        // an earlier holder writes first: let through, then overwritten by the newer one
        assertThat(write(dsl, first.fence(), "first's work")).isEqualTo(1);
        assertThat(write(dsl, second.fence(), "second's work")).isEqualTo(1);
        // the first holder wakes up and writes: turned away, the newer work stays
        assertThat(write(dsl, first.fence(), "stale work")).isZero();
        assertThat(resource()).isEqualTo("second's work");
        assertThat(dsl.select(LAST_FENCE).from(RESOURCE).fetchOne(LAST_FENCE)).isEqualTo(2L);
        // a holder writes again with its own number
        assertThat(write(dsl, second.fence(), "second's work, again")).isEqualTo(1);
        assertThat(queue.complete(dsl, first)).isFalse();

        // the naive variant: the same late write without the fence overwrites the newer work
        dsl.update(RESOURCE).set(VALUE, "stale work").where(ID.eq(1)).execute();
        assertThat(resource()).isEqualTo("stale work");
    }

    @Test
    void aJobsFenceGrowsByOnePerLeaseUnderConcurrentClaimsAndATransactionalClaimHoldsOneMore() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("contended", "k"));
        List<List<Long>> seen = Concurrently.run(THREADS, 120, t -> {
            List<Long> fences = new ArrayList<>();
            for (int round = 0; round < ROUNDS; round++) {
                for (Job job : queue.claim("contended", 1, Duration.ofMinutes(1), "w" + t)) {
                    fences.add(job.fence());
                    assertThat(queue.release(job)).isTrue();
                }
            }
            return fences;
        });
        List<Long> all = seen.stream().flatMap(Collection::stream).sorted().toList();
        assertThat(all).isNotEmpty();
        // every lease a number of its own, none skipped: 1, 2, ..., the leases taken
        assertThat(all)
                .containsExactlyElementsOf(
                        LongStream.rangeClosed(1, all.size()).boxed().toList());
        for (List<Long> own : seen) {
            assertThat(own).isSorted().doesNotHaveDuplicates();
        }
        long leases = all.size();
        assertThat(queue.find(dsl, id).orElseThrow().fence()).isEqualTo(leases);

        // a transactional claim holds the row lock, not a lease: its job carries one more than the
        // last lease's number, not written to the row, so after a rollback the next claim has it too
        List<Job> held = new ArrayList<>();
        assertThatThrownBy(() -> dsl.transaction(c -> {
                    held.addAll(queue.claimInTransaction(c.dsl(), "contended", 1));
                    throw new IllegalStateException("rolled back: the job stays pending");
                }))
                .hasMessageContaining("rolled back");
        assertThat(held).hasSize(1);
        assertThat(held.get(0).fence()).isEqualTo(leases + 1);
        assertThat(queue.claim("contended", 1, Duration.ofMinutes(1), "w")
                        .get(0)
                        .fence())
                .isEqualTo(leases + 1);
    }

    @Test
    void aJobRetriedOutOfTheHistoryGoesOnFromItsNumber() {
        long id =
                queue.enqueue(dsl, NewJob.builder("history", "k").maxAttempts(1).build());
        Job job = queue.claim("history", 1, Duration.ofMinutes(1), "w").get(0);
        assertThat(job.fence()).isEqualTo(1);
        queue.fail(dsl, job, "boom");
        assertThat(dsl.select(JOB_HISTORY.FENCE)
                        .from(JOB_HISTORY)
                        .where(JOB_HISTORY.ID.eq(id))
                        .fetchOne(JOB_HISTORY.FENCE))
                .isEqualTo(1L);
        assertThat(queue.find(dsl, id).orElseThrow().fence()).isEqualTo(1);
        assertThat(queue.retry(dsl, id)).isTrue();
        assertThat(queue.claim("history", 1, Duration.ofMinutes(1), "w").get(0).fence())
                .isEqualTo(2);
    }

    @Test
    void anAccountsFenceGrowsWithEveryLeaseAndTurnsAwayAHolderWhoseLeaseLapsed() throws Exception {
        ChannelAccountPool accounts = new ChannelAccountPool(dsl);
        accounts.register(dsl, List.of("GA", "GB"));
        // appended while the lease is held: an account's leases never overlap, so per account
        // this is the order its leases were taken in
        List<ChannelAccount> inLeaseOrder = java.util.Collections.synchronizedList(new ArrayList<>());
        Concurrently.run(THREADS, 120, t -> {
            for (int round = 0; round < ROUNDS; round++) {
                accounts.acquire(Duration.ofMinutes(1), "w" + t).ifPresent(a -> {
                    inLeaseOrder.add(a);
                    accounts.release(dsl, a.publicKey(), "w" + t);
                });
            }
            return null;
        });
        Map<String, List<Long>> byAccount = inLeaseOrder.stream()
                .collect(Collectors.groupingBy(
                        ChannelAccount::publicKey, Collectors.mapping(ChannelAccount::fence, Collectors.toList())));
        assertThat(byAccount).containsOnlyKeys("GA", "GB");
        byAccount.forEach((key, fences) -> {
            assertThat(fences).as(key).isSorted().doesNotHaveDuplicates();
            assertThat(fences.get(0)).as(key).isPositive();
            // released: idle again, no lease and no fence
            ChannelAccount idle = accounts.find(dsl, key).orElseThrow();
            assertThat(idle.holder()).as(key).isEmpty();
            assertThat(idle.fence()).as(key).isZero();
        });

        accounts.remove(dsl, List.of("GB"));
        ChannelAccount paused =
                accounts.acquire(Duration.ofMillis(200), "paused").orElseThrow();
        Await.until(
                "the lapsed lease taken by another",
                Duration.ofSeconds(30),
                () -> accounts.acquire(Duration.ofMinutes(1), "next").isPresent());
        ChannelAccount next = accounts.find(dsl, "GA").orElseThrow();
        assertThat(next.holder()).contains("next");
        assertThat(next.fence()).isGreaterThan(paused.fence());
        assertThat(write(dsl, next.fence(), "next's work")).isEqualTo(1);
        assertThat(write(dsl, paused.fence(), "stale work")).isZero();
        assertThat(resource()).isEqualTo("next's work");
    }

    /**
     * Writers with fences 1 to 8 write at once, over and over, each successful write logged in
     * its own transaction after the guarded UPDATE: the row lock orders the writers, so the log
     * in commit order must never go back to a smaller number. A check made before the write (read
     * the last fence, compare, then write) lets two writers pass the check together, and the
     * smaller one then writes after the larger one.
     */
    @Test
    void theCheckAndTheWriteCannotBeSplitByAnotherWriterWhereACheckBeforeTheWriteCan() throws Exception {
        Concurrently.run(THREADS, 120, t -> {
            long fence = t + 1;
            for (int round = 0; round < ROUNDS; round++) {
                dsl.transaction(c -> {
                    if (write(c.dsl(), fence, "w" + fence) == 1) {
                        c.dsl().insertInto(WRITES, FENCE).values(fence).execute();
                    }
                });
            }
            return null;
        });
        List<Long> logged = dsl.select(FENCE).from(WRITES).orderBy(SEQ).fetch(FENCE);
        assertThat(logged).isNotEmpty().isSorted();
        assertThat(dsl.select(LAST_FENCE).from(RESOURCE).fetchOne(LAST_FENCE)).isEqualTo((long) THREADS);
        assertThat(resource()).isEqualTo("w" + THREADS);

        // the naive variant, two writers released together after both checked the stored number
        dsl.update(RESOURCE).set(LAST_FENCE, 0L).set(VALUE, "reset").execute();
        CyclicBarrier bothChecked = new CyclicBarrier(2);
        CountDownLatch newerWrote = new CountDownLatch(1);
        Concurrently.run(2, 60, t -> {
            long fence = t == 0 ? 5 : 9;
            Long last = dsl.select(LAST_FENCE).from(RESOURCE).where(ID.eq(1)).fetchOne(LAST_FENCE);
            bothChecked.await();
            if (last == null || last <= fence) {
                if (fence == 5) {
                    assertThat(newerWrote.await(60, TimeUnit.SECONDS)).isTrue();
                }
                dsl.update(RESOURCE)
                        .set(VALUE, "w" + fence)
                        .set(LAST_FENCE, fence)
                        .where(ID.eq(1))
                        .execute();
                if (fence == 9) {
                    newerWrote.countDown();
                }
            }
            return null;
        });
        assertThat(resource()).as("the stale writer overwrote the newer one").isEqualTo("w5");
    }

    @Test
    void refusesBadInputAndWritesNothing() {
        Map<Field<?>, Object> values = Map.of(VALUE, "x");
        assertThatThrownBy(() -> Fencing.update(dsl, RESOURCE, LAST_FENCE, -1, values, ID.eq(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fence");
        assertThatThrownBy(() -> Fencing.update(dsl, RESOURCE, LAST_FENCE, 1, Map.of(), ID.eq(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("values");
        assertThatThrownBy(() -> Fencing.update(dsl, RESOURCE, LAST_FENCE, 1, Map.of(LAST_FENCE, 7L), ID.eq(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("last_fence");
        assertThatThrownBy(() -> Fencing.update(
                        dsl,
                        CHANNEL_ACCOUNTS,
                        LAST_FENCE,
                        1,
                        Map.of(CHANNEL_ACCOUNTS.PUBLIC_KEY, "x"),
                        DSL.trueCondition()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a column");
        assertThatThrownBy(() -> Fencing.admits(LAST_FENCE, -5)).isInstanceOf(IllegalArgumentException.class);
        assertThat(resource()).isEqualTo("initial");
        assertThat(dsl.select(LAST_FENCE).from(RESOURCE).fetchOne(LAST_FENCE)).isNull();
    }

    private static int write(DSLContext tx, long fence, String value) {
        return Fencing.update(tx, RESOURCE, LAST_FENCE, fence, Map.of(VALUE, value), ID.eq(1));
    }

    private String resource() {
        return dsl.select(VALUE).from(RESOURCE).where(ID.eq(1)).fetchOne(VALUE);
    }
}

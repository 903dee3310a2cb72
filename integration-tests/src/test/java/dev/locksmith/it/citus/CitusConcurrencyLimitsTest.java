package dev.locksmith.it.citus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.it.jobs.ConcurrencyLimitsTest;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Concurrency limits on a Citus cluster: a keyed job is placed on the shard its queue and key hash
 * to, the limits are a reference table, and the keyed claim of a shard counts a key's running jobs
 * on that shard alone, in router statements. Leased and transactional workers on many threads
 * never run more jobs of a key than its limit; a key whose jobs were given two shards (the
 * placement undone) runs one per shard at once, which is what the placement prevents.
 */
class CitusConcurrencyLimitsTest extends CitusTest {

    private static final String QUEUE = "limited";
    private static final int KEYS = 10;
    private static final int PER_KEY = 12;
    private static final int UNKEYED = 30;

    private JobQueue queue;

    @BeforeEach
    void setUp() {
        queue = new JobQueue(dsl);
        dsl.execute("DELETE FROM {0}", table("jobs"));
        dsl.execute("DELETE FROM {0}", table("job_concurrency_limits"));
        dsl.execute("DELETE FROM {0}", table("job_key_starts"));
    }

    private Table<?> table(String name) {
        return DSL.table(DSL.name(schema, name));
    }

    private long count(String sql, Object... values) {
        return ((Number) DSL.using(pool, SQLDialect.POSTGRES).fetchValue(sql, values)).longValue();
    }

    @Test
    void aKeysJobsShareTheShardItsKeyHashesToAndAKeyBesideAnotherNeedsAShard() {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            for (int k = 0; k < KEYS; k++) {
                jobs.add(NewJob.builder(QUEUE, "work").concurrencyKey("k" + k).build());
            }
        }
        queue.enqueueAll(dsl, jobs);
        String jobsTable = schema + ".jobs";
        assertThat(count("SELECT max(n) FROM (SELECT count(DISTINCT shard) AS n FROM " + jobsTable
                        + " GROUP BY concurrency_key) k"))
                .as("shards per key")
                .isEqualTo(1);
        assertThat(count("SELECT count(DISTINCT shard) FROM " + jobsTable))
                .as("keys spread")
                .isGreaterThan(1);

        // a concurrency key and a unique key that may hash elsewhere: refused, nothing written
        NewJob both = NewJob.builder(QUEUE, "work")
                .concurrencyKey("tenant")
                .uniqueKey("order-1")
                .build();
        assertThatThrownBy(() -> queue.enqueue(dsl, both))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("concurrency key and a different unique key needs a shard");
        assertThat(count("SELECT count(*) FROM " + jobsTable + " WHERE concurrency_key = 'tenant'"))
                .isZero();
        // the same string as both keys hashes to one shard; a job given a shard stays there
        queue.enqueue(
                dsl,
                NewJob.builder(QUEUE, "work")
                        .concurrencyKey("k1")
                        .orderingKey("k1")
                        .build());
        queue.enqueue(
                dsl,
                NewJob.builder(QUEUE, "work")
                        .concurrencyKey("tenant")
                        .uniqueKey("order-1")
                        .shard(3)
                        .build());
        assertThat(count("SELECT count(DISTINCT shard) FROM " + jobsTable + " WHERE concurrency_key = 'k1'"))
                .isEqualTo(1);
        assertThat(count("SELECT shard FROM " + jobsTable + " WHERE concurrency_key = 'tenant'"))
                .isEqualTo(3);
    }

    @Test
    void leasedAndTransactionalWorkersNeverRunMoreJobsOfAKeyThanItsLimit() throws Exception {
        ConcurrencyLimitsTest.Recorder recorder = new ConcurrencyLimitsTest.Recorder();
        ConcurrencyLimitsTest.enqueueKeyed(queue, dsl, QUEUE, KEYS, PER_KEY, ConcurrencyLimitsTest::limitOf);
        // and jobs without a key, which the plain claim of each shard takes beside the keyed ones
        queue.enqueueAll(dsl, java.util.Collections.nCopies(UNKEYED, NewJob.of(QUEUE, "work")));
        AtomicInteger unkeyed = new AtomicInteger();
        JobHandler handler = (job, tx) -> {
            if (job.concurrencyKey() == null) {
                unkeyed.incrementAndGet();
            } else {
                recorder.run(tx, job);
            }
        };
        CountDownLatch done = new CountDownLatch(KEYS * PER_KEY + UNKEYED);
        ConcurrencyLimitsTest.runUntil(
                done,
                jobWorker(handler, done),
                jobWorker(handler, done),
                TransactionalWorker.builder(queueOnSchema(new WorkerEvents() {}), QUEUE, (jobs, tx) -> {
                            for (Job job : jobs) {
                                handler.handle(job, tx);
                                done.countDown();
                            }
                        })
                        .threads(2)
                        .batchSize(5)
                        .pollInterval(Duration.ofMillis(20))
                        .build());
        recorder.assertWithinLimitsEachRanOnce(KEYS, ConcurrencyLimitsTest::limitOf, KEYS * PER_KEY);
        assertThat(unkeyed).hasValue(UNKEYED);
        assertThat(count("SELECT count(*) FROM " + schema + ".jobs")).isZero();
    }

    @Test
    void aClaimMadeBetweenTheTwoStatementsOfAnotherFindsTheKeyFull() {
        // the function's statement pairs a slot, the next statement leases the job: a claim made
        // in between (here, from a listener on the first claim's thread, on another connection)
        // must not find the slot free. It finds its lock held: the two run in one transaction.
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            jobs.add(NewJob.builder(QUEUE, "work").concurrencyKey("k0").build());
        }
        queue.enqueueAll(dsl, jobs);
        queue.concurrencyLimits().set(dsl, QUEUE, "k0", 1);
        // the lease of the jobs the function paired, about to start
        List<Job> between = claimedBefore("array_position");
        assertThat(between).as("claimed while the first claim held the slot").isEmpty();
        assertThat(count("SELECT count(*) FROM " + schema + ".jobs WHERE status = 'running'"))
                .isEqualTo(1);
    }

    @Test
    void aKeyWhoseJobsWereGivenTwoShardsRunsOnePerShard() throws Exception {
        // the placement undone by hand: k0, limit 1, on two shards; each shard's claim counts its own
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            jobs.add(NewJob.builder(QUEUE, "work")
                    .concurrencyKey("k0")
                    .shard(1 + i % 2)
                    .build());
        }
        queue.enqueueAll(dsl, jobs);
        queue.concurrencyLimits().set(dsl, QUEUE, "k0", 1);
        ConcurrencyLimitsTest.Recorder recorder = new ConcurrencyLimitsTest.Recorder();
        CountDownLatch done = new CountDownLatch(10);
        CountDownLatch both = new CountDownLatch(2);
        JobWorker worker = JobWorker.builder(queueOnSchema(new WorkerEvents() {}), QUEUE, (job, tx) -> {
                    recorder.started(job);
                    try {
                        // two at once: one of each shard, if the limits let them
                        both.countDown();
                        both.await(60, TimeUnit.SECONDS);
                    } finally {
                        recorder.ended(job);
                        done.countDown();
                    }
                })
                .threads(4)
                .pollInterval(Duration.ofMillis(20))
                .build();
        ConcurrencyLimitsTest.runUntil(done, worker);
        assertThat(recorder.most("k0")).as("limit 1, once per shard").isEqualTo(2);
    }

    @Test
    void aClaimTakesNoMoreThanTheFreeSlotsAndTheTakeIsARouterStatement() throws Exception {
        ConcurrencyLimitsTest.enqueueKeyed(queue, dsl, QUEUE, 3, 5, k -> 2);
        List<String> statements = new java.util.concurrent.CopyOnWriteArrayList<>();
        JobQueue recorded = new JobQueue(recording(statements));
        List<Job> first = recorded.claim(Claim.of(QUEUE, 100), Duration.ofMinutes(5), "w1");
        assertThat(first).hasSize(6);
        assertThat(first.stream().map(Job::concurrencyKey).distinct()).hasSize(3);
        assertThat(recorded.claim(Claim.of(QUEUE, 100), Duration.ofMinutes(5), "w2"))
                .as("every key at its limit")
                .isEmpty();
        assertThat(queue.concurrencyLimits().heldBack(QUEUE, 1_000))
                .isEqualTo(new ConcurrencyLimits.HeldBack(3, 9, 1_000));
        assertThat(queue.concurrencyLimits().heldBackByKey(QUEUE, 10, 1_000))
                .containsExactly(
                        new ConcurrencyLimits.KeyHeldBack("k0", 2, 3),
                        new ConcurrencyLimits.KeyHeldBack("k1", 2, 3),
                        new ConcurrencyLimits.KeyHeldBack("k2", 2, 3));
        String take = statements.stream()
                .filter(s -> s.startsWith("update") && s.contains("key_slot"))
                .findFirst()
                .orElseThrow();
        assertThat(explain(take)).contains("Task Count: 1");
        // a completed job frees its slot: the next claim takes one job of its key
        assertThat(queue.complete(dsl, first.get(0))).isTrue();
        List<Job> next = queue.claim(Claim.of(QUEUE, 100), Duration.ofMinutes(5), "w3");
        assertThat(next)
                .extracting(Job::concurrencyKey)
                .containsExactly(first.get(0).concurrencyKey());
    }

    @Test
    void concurrentClaimsStartExactlyEachKeysRateAndItsStartsLiveOnItsShard() throws Exception {
        // rates of 1 to 3 starts an hour: every start the window allows is taken, and no more
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            for (int k = 0; k < 6; k++) {
                jobs.add(NewJob.builder(QUEUE, "work").concurrencyKey("k" + k).build());
            }
        }
        queue.enqueueAll(dsl, jobs);
        for (int k = 0; k < 6; k++) {
            queue.rateLimits().set(dsl, QUEUE, "k" + k, 1 + k % 3, Duration.ofHours(1));
        }
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(4);
        List<java.util.concurrent.Future<?>> claimers = new ArrayList<>();
        List<Job> started = new java.util.concurrent.CopyOnWriteArrayList<>();
        try {
            for (int t = 0; t < 4; t++) {
                boolean leased = t < 3;
                JobQueue mine = queueOnSchema(new WorkerEvents() {});
                claimers.add(threads.submit(() -> {
                    // until ten claims in a row come back empty
                    for (int empty = 0; empty < 10 && !Thread.currentThread().isInterrupted(); ) {
                        List<Job> claimed = leased
                                ? mine.claim(Claim.of(QUEUE, 3), Duration.ofMinutes(5), "w")
                                : DSL.using(pool, SQLDialect.POSTGRES)
                                        .transactionResult(c -> mine.claimInTransaction(c.dsl(), Claim.of(QUEUE, 3)));
                        started.addAll(claimed);
                        empty = claimed.isEmpty() ? empty + 1 : 0;
                    }
                    return null;
                }));
            }
            for (var claimer : claimers) {
                claimer.get(180, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
            // no claimer left to claim the next test's jobs
            assertThat(threads.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        }
        String jobsTable = schema + ".jobs";
        for (int k = 0; k < 6; k++) {
            String key = "k" + k;
            assertThat(started.stream()
                            .filter(j -> key.equals(j.concurrencyKey()))
                            .count())
                    .as("starts of " + key)
                    .isEqualTo(1 + k % 3);
            assertThat(count(
                            "SELECT count(*) FROM " + jobsTable + " WHERE concurrency_key = ? AND status = 'pending' "
                                    + "AND attempts = 0",
                            key))
                    .as("left pending of " + key + ", uncounted")
                    .isEqualTo(8 - (1 + k % 3));
            assertThat(count(
                            "SELECT cardinality(starts) FROM " + schema + ".job_key_starts WHERE concurrency_key = ? "
                                    + "AND shard = (SELECT min(shard) FROM " + jobsTable
                                    + " WHERE concurrency_key = ?)",
                            key,
                            key))
                    .as("starts of " + key + " recorded on its shard")
                    .isEqualTo(1 + k % 3);
        }
        // every key's window is full: all six at their limit, holding back the 36 left
        assertThat(queue.concurrencyLimits().heldBack(QUEUE, 1_000))
                .isEqualTo(new ConcurrencyLimits.HeldBack(6, 36, 1_000));
        assertThat(queue.concurrencyLimits().heldBackByKey(QUEUE, 10, 1_000))
                .extracting(ConcurrencyLimits.KeyHeldBack::jobsHeldBack)
                .containsExactlyInAnyOrder(7, 7, 6, 6, 5, 5);
    }

    @Test
    void aClaimMadeWhileAnotherRecordsItsStartsFindsTheKeysWindowFull() {
        // the starts are written by a third statement: a claim made before it (from a listener on
        // the first claim's thread, on another connection) finds the key's rate lock held
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            jobs.add(NewJob.builder(QUEUE, "work").concurrencyKey("k0").build());
        }
        queue.enqueueAll(dsl, jobs);
        queue.rateLimits().set(dsl, QUEUE, "k0", 1, Duration.ofHours(1));
        List<Job> between = claimedBefore("job_starts_kept");
        assertThat(between)
                .as("claimed while the first claim recorded its start")
                .isEmpty();
        assertThat(count("SELECT count(*) FROM " + schema + ".jobs WHERE status = 'running'"))
                .isEqualTo(1);
    }

    @Test
    void aKeyedClaimOnAConnectionToAWorkerNodeIsRefusedAndClaimsNothing() {
        queue.enqueue(dsl, NewJob.builder(QUEUE, "work").concurrencyKey("k0").build());
        queue.concurrencyLimits().set(dsl, QUEUE, "k0", 1);
        var worker = DSL.using(pool, SQLDialect.POSTGRES)
                .fetchOne("SELECT nodename, nodeport FROM pg_dist_node WHERE groupid > 0 AND noderole = 'primary' "
                        + "ORDER BY nodeport LIMIT 1");
        assertThat(worker).isNotNull();
        org.postgresql.ds.PGSimpleDataSource onWorker = new org.postgresql.ds.PGSimpleDataSource();
        onWorker.setServerNames(new String[] {worker.get(0, String.class)});
        onWorker.setPortNumbers(new int[] {worker.get(1, Integer.class)});
        onWorker.setDatabaseName((String) DSL.using(pool, SQLDialect.POSTGRES).fetchValue("SELECT current_database()"));
        onWorker.setUser(pool.getUsername());
        onWorker.setPassword(pool.getPassword());
        JobQueue there = new JobQueue(Locksmith.builder(onWorker).schema(schema).build());
        // the slot locks would be the worker's, not the coordinator's every other claim takes
        assertThatThrownBy(() -> there.claim(Claim.of(QUEUE, 10), Duration.ofMinutes(5), "w"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("must connect to the coordinator");
        assertThat(count("SELECT count(*) FROM " + schema + ".jobs WHERE status = 'pending'"))
                .isEqualTo(1);
    }

    @Test
    void aTransactionalClaimThatTookNoJobOfAShardHoldsNoneOfItsLocksAfterwards() throws Exception {
        // k0's one job is locked by another transaction: the claim of its shard locks k0's slot,
        // finds the job locked and takes nothing; the caller's transaction goes on. Its lock must
        // not go on with it: once the job is free, another claim takes it.
        queue.enqueue(dsl, NewJob.builder(QUEUE, "work").concurrencyKey("k0").build());
        queue.concurrencyLimits().set(dsl, QUEUE, "k0", 1);
        String jobsTable = schema + ".jobs";
        int shard = (int) count("SELECT shard FROM " + jobsTable + " WHERE concurrency_key = 'k0'");
        JobQueue other = queueOnSchema(new WorkerEvents() {});
        List<Job> afterwards = DSL.using(pool, SQLDialect.POSTGRES).transactionResult(caller -> {
            try (java.sql.Connection holder = pool.getConnection()) {
                holder.setAutoCommit(false);
                try (var lock = holder.prepareStatement(
                        "SELECT id FROM " + jobsTable + " WHERE shard = ? AND concurrency_key = 'k0' FOR UPDATE")) {
                    lock.setInt(1, shard);
                    lock.executeQuery().close();
                }
                assertThat(queue.claimInTransaction(
                                caller.dsl(), Claim.of(QUEUE, 10).onShards(java.util.Set.of(shard))))
                        .isEmpty();
                holder.commit();
            }
            // the caller's transaction still open
            return other.claim(Claim.of(QUEUE, 10), Duration.ofMinutes(5), "after");
        });
        assertThat(afterwards).extracting(Job::concurrencyKey).containsExactly("k0");
    }

    @Test
    void aKeysStartsOlderThanItsWindowAreDroppedWhenItStartsAgain() {
        queue.enqueue(dsl, NewJob.builder(QUEUE, "work").concurrencyKey("k0").build());
        queue.rateLimits().set(dsl, QUEUE, "k0", 2, Duration.ofHours(1));
        String jobsTable = schema + ".jobs";
        int shard = (int) count("SELECT shard FROM " + jobsTable + " WHERE concurrency_key = 'k0'");
        // a start two hours ago (outside the window) and one a minute ago (inside)
        DSL.using(pool, SQLDialect.POSTGRES)
                .execute(
                        "INSERT INTO " + schema + ".job_key_starts (queue, concurrency_key, shard, starts) "
                                + "VALUES (?, 'k0', ?, ARRAY[now() - interval '2 hours', now() - interval '1 minute'])",
                        QUEUE,
                        shard);
        assertThat(queue.claim(Claim.of(QUEUE, 10), Duration.ofMinutes(5), "w")).hasSize(1);
        assertThat(count("SELECT cardinality(starts) FROM " + schema + ".job_key_starts WHERE concurrency_key = 'k0'"))
                .as("the minute-old start and the new one")
                .isEqualTo(2);
        assertThat(count("SELECT count(*) FROM " + schema + ".job_key_starts s, unnest(s.starts) t "
                        + "WHERE t < now() - interval '1 hour'"))
                .isZero();
    }

    @Test
    void theCitusLayoutOfTheLimitsRollsBackWithEachKeysStartsInOneRowAndAppliesAgain() {
        String target = schema + "_rollback";
        migrate(target, java.util.EnumSet.of(dev.locksmith.schema.SchemaModule.QUEUE));
        try {
            // a key given two shards has a row of starts on each
            DSL.using(pool, SQLDialect.POSTGRES)
                    .execute("INSERT INTO " + target + ".job_key_starts (queue, concurrency_key, shard, starts) "
                            + "VALUES ('q', 'k', 1, ARRAY[now()]), ('q', 'k', 2, ARRAY[now() - interval '1 minute'])");
            List<dev.locksmith.schema.AppliedChangeSet> remaining =
                    dev.locksmith.schema.LocksmithSchema.rollback(migrator(target), target, 1);
            assertThat(remaining)
                    .extracting(dev.locksmith.schema.AppliedChangeSet::id)
                    .last()
                    .isEqualTo("queue-017-concurrency-limits");
            String tables = "SELECT count(*) FROM citus_tables WHERE table_name::text IN (?, ?)";
            assertThat(count(tables, target + ".job_key_starts", target + ".job_concurrency_limits"))
                    .isZero();
            assertThat(count("SELECT cardinality(starts) FROM " + target
                            + ".job_key_starts WHERE concurrency_key = 'k'"))
                    .isEqualTo(2);
            migrate(target, java.util.EnumSet.of(dev.locksmith.schema.SchemaModule.QUEUE));
            assertThat(count(tables, target + ".job_key_starts", target + ".job_concurrency_limits"))
                    .isEqualTo(2);
        } finally {
            DSL.using(pool, SQLDialect.POSTGRES).execute("DROP SCHEMA {0} CASCADE", DSL.name(target));
        }
    }

    /**
     * Makes one leased claim of the queue, and another on another connection just before the
     * first's statement containing {@code marker} starts; returns what the other claimed, having
     * checked that the first claimed one job.
     */
    private List<Job> claimedBefore(String marker) {
        JobQueue other = queueOnSchema(new WorkerEvents() {});
        List<Job> between = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean fired = new java.util.concurrent.atomic.AtomicBoolean();
        org.jooq.ExecuteListener inBetween = new org.jooq.ExecuteListener() {
            @Override
            public void executeStart(org.jooq.ExecuteContext ctx) {
                if (ctx.sql() != null && ctx.sql().contains(marker) && fired.compareAndSet(false, true)) {
                    between.addAll(other.claim(Claim.of(QUEUE, 10), Duration.ofMinutes(5), "between"));
                }
            }
        };
        JobQueue first = new JobQueue(Locksmith.builder(DSL.using(pool, SQLDialect.POSTGRES)
                        .configuration()
                        .derive(inBetween)
                        .dsl())
                .schema(schema)
                .build()
                .dsl());
        List<Job> claimed = first.claim(Claim.of(QUEUE, 10), Duration.ofMinutes(5), "first");
        assertThat(fired).isTrue();
        assertThat(claimed)
                .as("the first claim's, with %s claimed in between", between)
                .hasSize(1);
        return between;
    }

    private JobQueue queueOnSchema(WorkerEvents events) {
        return new JobQueue(
                Locksmith.builder(pool).schema(schema).observer(events).build());
    }

    private JobWorker jobWorker(JobHandler handler, CountDownLatch done) {
        return JobWorker.builder(
                        queueOnSchema(new WorkerEvents() {
                            @Override
                            public void completed(Job job) {
                                done.countDown();
                            }
                        }),
                        QUEUE,
                        handler)
                .threads(2)
                .pollInterval(Duration.ofMillis(20))
                .build();
    }
}

package dev.locksmith.it.citus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Await;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.QueueDepth;
import dev.locksmith.jobs.TransactionalWorker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The queue on a Citus cluster: jobs is distributed by shard, enqueue spreads jobs over the
 * shards (and places a unique or ordering key's jobs on the shard its key hashes to), every claim
 * is a single-shard (router) statement, and workers drain a queue spread over every shard
 * exactly once (transactional) or without duplicates (leased).
 */
class CitusQueueTest extends CitusTest {

    private static final int JOBS = 10_000;

    private JobQueue queue;

    @BeforeEach
    void setUp() {
        queue = new JobQueue(dsl);
        dsl.execute("DELETE FROM {0}", DSL.table(DSL.name(schema, "jobs")));
    }

    @Test
    void jobsAccountsAndThePoolAreDistributedAndTheOtherTablesStayOnTheCoordinator() {
        List<String> distributed = DSL.using(pool, org.jooq.SQLDialect.POSTGRES)
                .fetch(
                        "SELECT table_name::text || ' ' || citus_table_type || ' ' || distribution_column "
                                + "FROM citus_tables WHERE table_name::text LIKE {0} "
                                // the partitions of job_history are listed too: its layout is the parent's
                                + "AND NOT (SELECT c.relispartition FROM pg_class c WHERE c.oid = table_name)",
                        DSL.val(schema + ".%"))
                .getValues(0, String.class);
        assertThat(distributed)
                .containsExactlyInAnyOrder(
                        schema + ".jobs distributed shard",
                        schema + ".job_history distributed shard",
                        schema + ".accounts distributed id",
                        schema + ".account_transfers distributed transfer_id",
                        schema + ".channel_accounts distributed bucket",
                        schema + ".channel_account_leases distributed bucket",
                        // the concurrency limits: a copy on every node, read by each shard's keyed claim
                        schema + ".job_concurrency_limits reference <none>",
                        // a rate-limited key's starts, on its shard
                        schema + ".job_key_starts distributed shard");
        assertThat(jobShards()).isEqualTo(32);
    }

    @Test
    void theCitusLayoutCanBeForcedOff() {
        String plain = schema + "_plain";
        System.setProperty("locksmith.citus", "off");
        try {
            migrate(plain, java.util.EnumSet.of(dev.locksmith.schema.SchemaModule.QUEUE));
        } finally {
            System.clearProperty("locksmith.citus");
        }
        try {
            assertThat(DSL.using(pool, org.jooq.SQLDialect.POSTGRES)
                            .fetchValue(
                                    "SELECT count(*) FROM citus_tables WHERE table_name::text LIKE {0}",
                                    DSL.val(plain + ".%")))
                    .isEqualTo(0L);
            // a plain table on the coordinator: the claims of plain PostgreSQL work on it
            JobQueue local = new JobQueue(Locksmith.builder(DSL.using(pool, org.jooq.SQLDialect.POSTGRES))
                    .schema(plain)
                    .build()
                    .dsl());
            local.enqueueAll(
                    DSL.using(pool, org.jooq.SQLDialect.POSTGRES), Collections.nCopies(3, NewJob.of("p", "k")));
            List<Job> claimed = DSL.using(pool, org.jooq.SQLDialect.POSTGRES)
                    .transactionResult(c -> local.claimInTransaction(c.dsl(), Claim.of("p", 10)));
            assertThat(claimed).hasSize(3);
        } finally {
            DSL.using(pool, org.jooq.SQLDialect.POSTGRES).execute("DROP SCHEMA {0} CASCADE", DSL.name(plain));
        }
    }

    @Test
    void enqueueSpreadsJobsOverEveryShardAndKeysDecideTheirShard() {
        queue.enqueueAll(dsl, Collections.nCopies(2_000, NewJob.of("spread", "noop")));
        assertThat(count("SELECT count(DISTINCT shard) FROM {0} WHERE queue = 'spread'"))
                .isEqualTo(jobShards());
        // the depth: its counts stop at the cap, its oldest due job is looked up shard by shard
        long last = count("SELECT max(id) FROM {0} WHERE queue = 'spread'");
        DSL.using(pool, org.jooq.SQLDialect.POSTGRES)
                .update(jobs())
                .set(
                        DSL.field(DSL.name("run_at"), java.time.OffsetDateTime.class),
                        java.time.OffsetDateTime.now().minusHours(1))
                .where(DSL.field(DSL.name("id"), Long.class).eq(last))
                .execute();
        // a queue that has not looked the layout up yet (this one has: it enqueued) first runs the
        // one-server statement, which Citus refuses; also where the DSLContext translates database
        // errors into exceptions of its own, as Spring's jOOQ set-up does
        org.jooq.DSLContext translating = dsl.configuration()
                .deriveAppending(new ExecuteListener() {
                    @Override
                    public void exception(ExecuteContext ctx) {
                        if (ctx.sqlException() != null) {
                            ctx.exception(new IllegalStateException("translated", ctx.sqlException()));
                        }
                    }
                })
                .dsl();
        for (JobQueue reading : List.of(queue, new JobQueue(dsl), new JobQueue(translating))) {
            for (int i = 0; i < 2; i++) {
                QueueDepth depth = reading.depth("spread", 500);
                assertThat(depth.pending()).isEqualTo(500L);
                assertThat(depth.running()).isZero();
                assertThat(depth.oldestDuePendingAge())
                        .hasValueSatisfying(age -> assertThat(age).isGreaterThanOrEqualTo(Duration.ofMinutes(59)));
            }
        }

        // a unique key: one live job per key and queue, whatever the call
        long first = queue.enqueue(
                dsl, NewJob.builder("spread", "once").uniqueKey("invoice-7").build());
        long again = queue.enqueue(
                dsl, NewJob.builder("spread", "once").uniqueKey("invoice-7").build());
        assertThat(again).isEqualTo(first);
        assertThat(count("SELECT count(*) FROM {0} WHERE unique_key = 'invoice-7'"))
                .isOne();

        // an ordering key's jobs share one shard, so a one-shard claim sees the key's head
        for (int i = 0; i < 5; i++) {
            queue.enqueue(
                    dsl,
                    NewJob.builder("keyed", "step").orderingKey("account-42").build());
        }
        assertThat(count("SELECT count(DISTINCT shard) FROM {0} WHERE ordering_key = 'account-42'"))
                .isOne();
        List<Job> heads = dsl.transactionResult(c -> queue.claimInTransaction(c.dsl(), Claim.of("keyed", 10)));
        assertThat(heads).hasSize(1);

        // what the layout cannot place is refused, and nothing is written
        long before = count("SELECT count(*) FROM {0}");
        assertThatThrownBy(() -> queue.enqueue(
                        dsl,
                        NewJob.builder("spread", "both")
                                .uniqueKey("u-1")
                                .orderingKey("o-1")
                                .build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("both a unique key and an ordering key needs a shard");
        assertThatThrownBy(() -> queue.enqueue(
                        dsl, NewJob.builder("spread", "far").shard(jobShards()).build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shard must be below " + jobShards());
        assertThat(count("SELECT count(*) FROM {0}")).isEqualTo(before);
    }

    @Test
    void expiredLeasesAreRescuedShardByShardAndTheLastAttemptFails() throws Exception {
        queue.enqueueAll(dsl, Collections.nCopies(40, NewJob.of("rescue", "k")));
        queue.enqueueAll(
                dsl,
                Collections.nCopies(
                        10, NewJob.builder("rescue", "last").maxAttempts(1).build()));
        List<Job> leased = queue.claim(Claim.of("rescue", 50), Duration.ofMillis(200), "crashed-worker");
        assertThat(leased).hasSize(50);
        AtomicInteger rescued = new AtomicInteger();
        await("the leases to expire and be rescued", () -> rescued.addAndGet(queue.rescueExpired()) == 50);
        assertThat(count("SELECT count(*) FROM {0} WHERE status = 'pending' AND kind = 'k'"))
                .isEqualTo(40);
        // failed for good: moved to the history, distributed by shard beside jobs (queue-012)
        assertThat(((Number) DSL.using(pool, org.jooq.SQLDialect.POSTGRES)
                                .fetchValue(
                                        "SELECT count(*) FROM {0} WHERE status = 'failed' AND kind = 'last' "
                                                + "AND finished_at IS NOT NULL",
                                        DSL.table(DSL.name(schema, "job_history"))))
                        .longValue())
                .isEqualTo(10);
    }

    @Test
    void finishedJobsMoveToTheHistoryOnTheirShardAndRetryBringsThemBack() {
        JobQueue keeping = new JobQueue(
                dsl,
                dev.locksmith.jobs.JobQueueConfig.builder().keepCompleted(true).build());
        keeping.enqueueAll(dsl, Collections.nCopies(30, NewJob.of("history", "k")));
        List<Job> leased = keeping.claim(Claim.of("history", 20), Duration.ofMinutes(5), "w");
        assertThat(leased).hasSize(20);
        // one completion alone, nine in one statement, five cancelled by id (two of them pending)
        assertThat(keeping.complete(dsl, leased.get(0))).isTrue();
        assertThat(keeping.completeAll(dsl, leased.subList(1, 10))).isEqualTo(9);
        List<Long> cancelled = new ArrayList<>();
        for (Job job : leased.subList(10, 13)) {
            cancelled.add(job.id());
        }
        cancelled.addAll(dsl.select(DSL.field(DSL.name("id"), Long.class))
                .from(jobs())
                .where(DSL.field(DSL.name("status")).eq("pending"))
                .limit(2)
                .fetch(0, Long.class));
        for (long id : cancelled) {
            assertThat(keeping.cancel(dsl, id)).as("cancel " + id).isTrue();
        }
        assertThat(history("done")).isEqualTo(10);
        assertThat(history("cancelled")).isEqualTo(5);
        assertThat(count("SELECT count(*) FROM {0}")).isEqualTo(15);
        assertThat(keeping.find(dsl, leased.get(0).id()).orElseThrow().status())
                .isEqualTo(dev.locksmith.jobs.JobStatus.DONE);

        assertThat(keeping.retry(dsl, cancelled.get(0))).isTrue();
        assertThat(keeping.deleteFinished(dsl, leased.get(1).id())).isTrue();
        assertThat(history("cancelled")).isEqualTo(4);
        assertThat(history("done")).isEqualTo(9);
        assertThat(count("SELECT count(*) FROM {0} WHERE status = 'pending'")).isEqualTo(9);
    }

    private long history(String status) {
        return ((Number) DSL.using(pool, org.jooq.SQLDialect.POSTGRES)
                        .fetchValue(
                                "SELECT count(*) FROM {0} WHERE status = {1}",
                                DSL.table(DSL.name(schema, "job_history")), DSL.val(status)))
                .longValue();
    }

    @Test
    void theTwoPhaseWorkerRefusesToStartOnCitus() {
        dev.locksmith.jobs.TwoPhaseWorker worker = dev.locksmith.jobs.TwoPhaseWorker.builder(
                        new JobQueue(Locksmith.builder(pool).schema(schema).build()),
                        "two-phase",
                        job -> {},
                        job -> dev.locksmith.jobs.SideEffectStatus.UNKNOWN)
                .build();
        assertThatThrownBy(worker::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("does not run on Citus yet");
    }

    @Test
    void everyClaimStatementIsARouterQueryAndThePlainOneIsRefused() throws Exception {
        queue.enqueueAll(dsl, Collections.nCopies(500, NewJob.of("plans", "noop")));
        List<String> claims = new ArrayList<>();
        ExecuteListener recorder = new ExecuteListener() {
            @Override
            public void executeStart(ExecuteContext ctx) {
                if (ctx.sql() != null && ctx.sql().contains("skip locked")) {
                    claims.add(ctx.sql());
                }
            }
        };
        org.jooq.DSLContext recordedDsl = Locksmith.builder(DSL.using(pool, org.jooq.SQLDialect.POSTGRES)
                        .configuration()
                        .derive(recorder)
                        .dsl())
                .schema(schema)
                .build()
                .dsl();
        JobQueue recorded = new JobQueue(recordedDsl);
        recordedDsl.transaction(c -> recorded.claimInTransaction(c.dsl(), Claim.of("plans", 10)));
        recorded.claim(Claim.of("plans", 10), Duration.ofMinutes(1), "planner");
        assertThat(claims).hasSizeGreaterThanOrEqualTo(2);
        for (String sql : claims.stream().distinct().toList()) {
            String plan = explainBound(sql);
            assertThat(plan).as(sql).contains("Task Count: 1").doesNotContain("Distributed Subplan");
        }

        // what the claim would be without a shard: Citus refuses to lock rows across shards
        String everyShard = claims.get(0).replaceAll("(\"[^\"]+\"\\.)*\"shard\" = \\?", "true");
        assertThatThrownBy(() -> explainBound(everyShard))
                .hasMessageContaining("could not run distributed query with FOR UPDATE/SHARE commands");
    }

    /**
     * Completing and heartbeating leased jobs of many shards sends one statement per shard, each
     * naming it: every one a router statement (one statement for all of them would visit every
     * shard, and an auto-committed one across two workers would need two-phase commit).
     */
    @Test
    void completionAndHeartbeatsNameOneShardPerStatement() throws Exception {
        queue.enqueueAll(dsl, Collections.nCopies(200, NewJob.of("settle", "noop")));
        List<String> statements = Collections.synchronizedList(new ArrayList<>());
        org.jooq.DSLContext recordedDsl = recording(statements);
        JobQueue recorded = new JobQueue(recordedDsl);
        List<Job> leased = recorded.claim(Claim.of("settle", 200), Duration.ofMinutes(1), "settler");
        Set<Integer> shards = leased.stream().map(Job::shard).collect(Collectors.toSet());
        assertThat(shards).hasSizeGreaterThan(10);
        statements.clear();
        for (Job job : leased.subList(0, 3)) {
            assertThat(recorded.heartbeat(job, Duration.ofMinutes(2))).isTrue();
        }
        int completed = recordedDsl.transactionResult(c -> recorded.completeAll(c.dsl(), leased));
        assertThat(completed).isEqualTo(leased.size());
        assertThat(count("SELECT count(*) FROM {0}")).isZero();
        List<String> settling = statements.stream()
                .filter(sql -> sql.startsWith("update") || sql.startsWith("delete"))
                .toList();
        assertThat(settling).hasSize(3 + shards.size());
        for (String sql : settling) {
            assertThat(sql).containsPattern("\\.\"shard\" = \\d+");
            assertThat(explain(sql)).as(sql).contains("Task Count: 1");
        }
    }

    /** EXPLAIN of a claim with queue 'plans' and shard 3 bound (all the claims' parameters). */
    private String explainBound(String sql) throws Exception {
        try (Connection c = pool.getConnection();
                PreparedStatement explain = c.prepareStatement("EXPLAIN " + sql)) {
            int parameters = explain.getParameterMetaData().getParameterCount();
            for (int i = 1; i <= parameters; i++) {
                String type = explain.getParameterMetaData().getParameterTypeName(i);
                switch (type) {
                    case "int4" -> explain.setInt(i, 3);
                    case "varchar", "text" ->
                        explain.setString(i, i == 1 && sql.startsWith("update") ? "planner" : "plans");
                    case "interval" -> explain.setObject(i, new org.postgresql.util.PGInterval("1 minute"));
                    default -> throw new AssertionError("unexpected parameter type " + type + " in " + sql);
                }
            }
            StringBuilder plan = new StringBuilder();
            try (ResultSet rows = explain.executeQuery()) {
                while (rows.next()) {
                    plan.append(rows.getString(1)).append('\n');
                }
            }
            return plan.toString();
        }
    }

    @Test
    void eightTransactionalWorkersDrainTenThousandJobsFromEveryShardExactlyOnce() throws Exception {
        for (int i = 0; i < JOBS; i += 1000) {
            queue.enqueueAll(dsl, Collections.nCopies(1000, NewJob.of("drain", "noop")));
        }
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        Set<Integer> shards = ConcurrentHashMap.newKeySet();
        AtomicInteger batchesAcrossShards = new AtomicInteger();
        List<TransactionalWorker> workers = new ArrayList<>();
        try {
            for (int w = 0; w < 8; w++) {
                workers.add(TransactionalWorker.builder(
                                new JobQueue(
                                        Locksmith.builder(pool).schema(schema).build()),
                                "drain",
                                (jobs, tx) -> {
                                    for (Job job : jobs) {
                                        runs.computeIfAbsent(job.id(), id -> new AtomicInteger())
                                                .incrementAndGet();
                                        shards.add(job.shard());
                                    }
                                    // a batch comes from one shard, so its transaction commits on one node
                                    if (jobs.stream().map(Job::shard).distinct().count() != 1) {
                                        batchesAcrossShards.incrementAndGet();
                                    }
                                })
                        .threads(2)
                        .batchSize(50)
                        .build()
                        .start());
            }
            await("the queue to drain", () -> count("SELECT count(*) FROM {0}") == 0);
        } finally {
            workers.forEach(TransactionalWorker::close);
        }
        assertThat(runs).hasSize(JOBS);
        assertThat(runs.values().stream().map(AtomicInteger::get).collect(Collectors.toSet()))
                .containsExactly(1);
        assertThat(shards).hasSize(jobShards());
        assertThat(batchesAcrossShards).hasValue(0);
        assertThat(workers.stream().mapToLong(TransactionalWorker::processed).sum())
                .isEqualTo(JOBS);
    }

    @Test
    void eightLeasedWorkersDrainTenThousandJobsFromEveryShardWithoutDuplicates() throws Exception {
        for (int i = 0; i < JOBS; i += 1000) {
            queue.enqueueAll(dsl, Collections.nCopies(1000, NewJob.of("lease", "noop")));
        }
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        Set<Integer> shards = ConcurrentHashMap.newKeySet();
        List<JobWorker> workers = new ArrayList<>();
        try {
            for (int w = 0; w < 8; w++) {
                workers.add(JobWorker.builder(
                                new JobQueue(
                                        Locksmith.builder(pool).schema(schema).build()),
                                "lease",
                                (job, tx) -> {
                                    runs.computeIfAbsent(job.id(), id -> new AtomicInteger())
                                            .incrementAndGet();
                                    shards.add(job.shard());
                                })
                        .threads(2)
                        .build()
                        .start());
            }
            await("the queue to drain", () -> count("SELECT count(*) FROM {0}") == 0);
        } finally {
            workers.forEach(JobWorker::close);
        }
        assertThat(runs).hasSize(JOBS);
        assertThat(runs.values().stream().map(AtomicInteger::get).collect(Collectors.toSet()))
                .containsExactly(1);
        assertThat(shards).hasSize(jobShards());
    }

    private org.jooq.Table<?> jobs() {
        return DSL.table(DSL.name(schema, "jobs"));
    }

    private long count(String sql) {
        return ((Number) DSL.using(pool, org.jooq.SQLDialect.POSTGRES).fetchValue(sql, jobs())).longValue();
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(120), condition);
    }
}

package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.GenerationSeams;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.engine.Generations;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The jobs table's generations (changelog queue-015): jobs is partitioned by slot, a drained
 * partition is emptied by TRUNCATE, the generation moves on once its partition is full, and the
 * last pending jobs of the oldest generation move into the current one. Steps are taken here one
 * at a time, as a worker's maintenance thread takes them every 250 ms, while a REPEATABLE READ
 * transaction holds the MVCC horizon back (generations turn at 256 kB only then).
 */
class GenerationsTest extends DatabaseTest {

    /** A payload that makes a thousand jobs about a third of a megabyte. */
    private static final String PAYLOAD = "{\"pad\": \"" + "x".repeat(200) + "\"}";

    private JobQueue queue;
    private Generations generations;

    /** A REPEATABLE READ transaction whose snapshot holds the MVCC horizon back. */
    private Connection horizonHolder;

    @BeforeEach
    void emptyQueue() throws SQLException {
        // Generations turn at 256 kB only while something holds the horizon back by 1,000
        // transactions or more (else VACUUM keeps up): hold it, and start 1,200 transactions
        // (subtransactions that write) after the holder's snapshot.
        horizonHolder = pool.getConnection();
        horizonHolder.setAutoCommit(false);
        try (Statement s = horizonHolder.createStatement()) {
            s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
            s.execute("SELECT 1");
        }
        dsl.execute("CREATE TABLE IF NOT EXISTS xid_burn (x int)");
        dsl.execute("DO $$ BEGIN FOR i IN 1..1200 LOOP BEGIN INSERT INTO xid_burn VALUES (i); "
                + "EXCEPTION WHEN OTHERS THEN NULL; END; END LOOP; END $$");
        dsl.execute("DELETE FROM locksmith.jobs");
        for (int slot = 0; slot < Generations.SLOTS; slot++) {
            dsl.execute("TRUNCATE locksmith.jobs_slot" + slot);
        }
        dsl.execute("SELECT setval('locksmith.job_generation', 0, true)");
        queue = new JobQueue(dsl);
        generations = GenerationSeams.on(dsl);
    }

    @AfterEach
    void releaseHorizon() throws SQLException {
        horizonHolder.rollback();
        horizonHolder.close();
    }

    private long generation() {
        return dsl.fetchOne("SELECT last_value FROM locksmith.job_generation").get(0, Long.class);
    }

    private long bytes(int slot) {
        return dsl.fetchOne("SELECT pg_relation_size(to_regclass(?))", "locksmith.jobs_slot" + slot)
                .get(0, Long.class);
    }

    private int slotOf(long id) {
        return dsl.fetchValue(JOBS.SLOT, JOBS.ID.eq(id));
    }

    /** Fills the current partition past full with jobs that are then deleted, as finished jobs are. */
    private void fillCurrentPartition() {
        for (int i = 0; i < 5; i++) {
            queue.enqueueAll(
                    dsl,
                    Collections.nCopies(
                            1_000,
                            NewJob.builder("filler", "f").payload(PAYLOAD).build()));
        }
        dsl.execute("DELETE FROM locksmith.jobs WHERE queue = 'filler'");
    }

    @Test
    void theSlotDefaultIsInlinedAndFollowsTheGeneration() {
        String plan = String.join(
                "\n",
                dsl.fetch("EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO locksmith.jobs (queue, kind) VALUES ('q', 'k')")
                        .getValues(0, String.class));
        assertThat(plan)
                .as("job_slot() inlined into the insert (queue-016), not called as a function")
                .contains("pg_sequence_last_value")
                .doesNotContain("job_slot()");

        dsl.execute("SELECT setval('locksmith.job_generation', 6, true)");
        long plain = dsl.fetchOne("INSERT INTO locksmith.jobs (queue, kind) VALUES ('plain', 'k') RETURNING id")
                .get(0, Long.class);
        assertThat(slotOf(plain))
                .as("a plain SQL insert goes to generation 6's slot")
                .isEqualTo(2);
        assertThat(slotOf(queue.enqueue(dsl, NewJob.of("work", "k"))))
                .as("and so does the library's")
                .isEqualTo(2);
    }

    @Test
    void aFullGenerationMovesOnAndItsDrainedPartitionIsEmptied() {
        assertThat(generations.partitioned()).isTrue();
        long first = queue.enqueue(dsl, NewJob.of("work", "before"));
        assertThat(slotOf(first)).isZero();
        assertThat(generations.step().advanced())
                .as("a partition that is not full")
                .isFalse();

        fillCurrentPartition();
        Generations.Step moved = generations.step();
        assertThat(moved.advanced()).isTrue();
        assertThat(generation()).isEqualTo(1);
        long second = queue.enqueue(dsl, NewJob.of("work", "after"));
        assertThat(slotOf(second))
                .as("new jobs go to the new generation's slot")
                .isEqualTo(1);

        // slot 0 still holds the first job: kept
        assertThat(generations.step().truncated()).isZero();
        assertThat(bytes(0)).isPositive();
        assertThat(dsl.fetchCount(JOBS, JOBS.ID.eq(first))).isOne();

        queue.claim("work", 10, Duration.ofMinutes(1), "w")
                .forEach(job -> assertThat(queue.complete(dsl, job)).isTrue());
        // now drained: emptied, however many times it was looked at before
        for (int i = 0; i < 40 && bytes(0) > 0; i++) {
            generations.step();
            sleepPastBackoff();
        }
        assertThat(bytes(0)).as("the drained partition, emptied by TRUNCATE").isZero();
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void withNothingHoldingTheHorizonAFullPartitionIsLeftToVacuum() throws SQLException {
        horizonHolder.rollback();
        Generations unheld = GenerationSeams.on(dsl);
        fillCurrentPartition();
        assertThat(bytes(0)).isGreaterThan(256L << 10);
        assertThat(unheld.step().advanced())
                .as("VACUUM keeps a partition small while nothing holds the horizon")
                .isFalse();
        assertThat(generation()).isZero();
    }

    /** The shape of the leased claim (JobStatements): an UPDATE of the ids a locking read picked. */
    private static final String CLAIM = "UPDATE locksmith.jobs SET status = 'running', locked_by = 'w', "
            + "locked_until = now() + interval '1 minute', lease_id = gen_random_uuid() "
            + "WHERE id = ANY(ARRAY(SELECT id FROM locksmith.jobs WHERE queue = $1 AND status = 'pending' "
            + "AND run_at <= statement_timestamp() ORDER BY priority, run_at, id LIMIT 10 FOR UPDATE SKIP LOCKED))";

    /** The generic plan of the statement prepared as {@code claim} on {@code c}, as EXPLAIN shows it. */
    private static String genericPlan(Connection c) throws SQLException {
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.execute("SET LOCAL plan_cache_mode = force_generic_plan");
            StringBuilder plan = new StringBuilder();
            try (java.sql.ResultSet r = s.executeQuery("EXPLAIN EXECUTE claim('work')")) {
                while (r.next()) {
                    plan.append(r.getString(1)).append('\n');
                }
            }
            return plan.toString();
        } finally {
            c.rollback();
            c.setAutoCommit(true);
        }
    }

    /**
     * A partition is empty when its generation begins, and a generic plan made then reads it with
     * a sequential scan where the claim's UPDATE looks the claimed ids up, and keeps doing so as
     * the partition fills. Once it holds jobs, a step analyzes it (once per generation), and the
     * plan is made again with index lookups. The partition's autovacuum is off meanwhile, so that
     * only the step analyzes it.
     */
    @Test
    void theCurrentPartitionIsAnalyzedOnceItHoldsJobsSoPlansMadeWhileItWasEmptyAreMadeAgain() throws SQLException {
        // nothing holds the horizon: the generation stays where it is (it moves at 256 kB while held)
        horizonHolder.rollback();
        Generations unheld = GenerationSeams.on(dsl);
        dsl.execute("ALTER TABLE locksmith.jobs_slot0 SET (autovacuum_enabled = false)");
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement()) {
            s.execute("PREPARE claim(text) AS " + CLAIM);
            try {
                assertThat(genericPlan(c)).contains("Seq Scan on jobs_slot0");
                queue.enqueueAll(
                        dsl,
                        Collections.nCopies(
                                5_000,
                                NewJob.builder("work", "x").payload(PAYLOAD).build()));
                assertThat(genericPlan(c))
                        .as("the plan made while the partition was empty is kept as it fills")
                        .contains("Seq Scan on jobs_slot0");
                Generations.Step step = unheld.step();
                assertThat(step.analyzed()).isTrue();
                assertThat(step.advanced()).isFalse();
                assertThat(genericPlan(c)).doesNotContain("Seq Scan on jobs_slot0");
                assertThat(unheld.step().analyzed()).as("once per generation").isFalse();
            } finally {
                s.execute("DEALLOCATE claim");
            }
        } finally {
            dsl.execute("ALTER TABLE locksmith.jobs_slot0 RESET (autovacuum_enabled)");
        }
    }

    @Test
    void aPartitionHoldingARunningOrScheduledJobIsKept() {
        long scheduled = queue.enqueue(
                dsl, NewJob.builder("work", "later").delay(Duration.ofHours(1)).build());
        queue.enqueue(dsl, NewJob.of("work", "now"));
        List<Job> running = queue.claim("work", 1, Duration.ofMinutes(5), "w");
        assertThat(running).hasSize(1);
        fillCurrentPartition();
        assertThat(generations.step().advanced()).isTrue();
        for (int i = 0; i < 5; i++) {
            generations.step();
        }
        assertThat(bytes(0)).isPositive();
        assertThat(dsl.fetchCount(JOBS, JOBS.SLOT.eq((short) 0))).isEqualTo(2);
        assertThat(queue.complete(dsl, running.get(0)))
                .as("the lease holds in a generation gone by")
                .isTrue();
        assertThat(dsl.fetchCount(JOBS, JOBS.ID.eq(scheduled))).isOne();
    }

    /**
     * A cancel that waits for a pending job's row while the generations move the job (a DELETE and
     * an INSERT with the same id, into the current partition, as the oldest generation's last
     * jobs move) finds it where it went and cancels it. A single statement would find its row
     * deleted and the new one outside its snapshot, and report the job already finished while it
     * stays pending (checked: the test fails on the cancel of one statement).
     */
    @Test
    void aCancelWaitingWhileItsJobMovesCancelsItWhereItWent() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("work", "moving"));
        assertThat(slotOf(id)).isZero();
        assertThat(whileItMoves(id, () -> queue.cancel(dsl, id)))
                .as("cancelled where it went")
                .isTrue();
        assertThat(dsl.fetchCount(JOBS, JOBS.ID.eq(id))).as("no longer live").isZero();
        assertThat(queue.find(dsl, id))
                .hasValueSatisfying(job -> assertThat(job.status()).isEqualTo(JobStatus.CANCELLED));
    }

    /**
     * A two-phase job held by its claim (pending, not due yet) is a job the generations may move
     * too; a step of its worker that waits for the row meanwhile finds it where it went: here the
     * attempt's failure, recorded after the move, schedules the retry with its error, where a
     * single statement would report the job taken by another claimer (LEASE_LOST) and write
     * nothing (checked: the test fails so).
     */
    @Test
    void aTwoPhaseStepWaitingWhileItsHeldJobMovesFindsItWhereItWent() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("work", "held"));
        List<Job> held = GenerationSeams.claims(dsl).twoPhase(dsl, Claim.of("work", 1), Duration.ofMinutes(5));
        assertThat(held).extracting(Job::id).containsExactly(id);
        FailResult failed = whileItMoves(id, () -> GenerationSeams.twoPhase(dsl).fail(dsl, held.get(0), "boom"));
        assertThat(failed.outcome()).isEqualTo(FailResult.Outcome.RETRY_SCHEDULED);
        assertThat(dsl.fetchSingle("SELECT status, last_error, slot FROM locksmith.jobs WHERE id = ?", id)
                        .intoArray())
                .containsExactly("pending", "boom", (short) 1);
    }

    /**
     * Runs {@code step} on another thread while job {@code id} moves to slot 1 as the generations
     * move a pending job (a DELETE and an INSERT with the same id, the statement
     * {@code Generations.moveStragglers} runs), held open until the step waits for the row.
     */
    private <T> T whileItMoves(long id, Callable<T> step) throws Exception {
        List<Field<?>> columns = new ArrayList<>(Arrays.asList(JOBS.fields()));
        columns.remove(JOBS.SLOT);
        List<Field<?>> selected = new ArrayList<>();
        for (Field<?> column : columns) {
            selected.add(DSL.field(DSL.name("moved", column.getName()), column.getDataType()));
        }
        selected.add(DSL.val((short) 1, JOBS.SLOT));
        List<Field<?>> inserted = new ArrayList<>(columns);
        inserted.add(JOBS.SLOT);
        ExecutorService other = Executors.newSingleThreadExecutor();
        try (Connection mover = pool.getConnection()) {
            mover.setAutoCommit(false);
            DSLContext moving = DSL.using(mover, SQLDialect.POSTGRES);
            var moved = DSL.name("moved")
                    .as(DSL.deleteFrom(JOBS).where(JOBS.ID.eq(id)).returningResult(columns));
            assertThat(moving.with(moved)
                            .insertInto(JOBS)
                            .columns(inserted)
                            .select(DSL.select(selected).from(moved))
                            .execute())
                    .isOne();
            Future<T> result = other.submit(step);
            awaitLockWaiter();
            mover.commit();
            return result.get(30, TimeUnit.SECONDS);
        } finally {
            other.shutdownNow();
        }
    }

    /** Waits (up to 30 s) until a backend of this database waits for a lock. */
    private void awaitLockWaiter() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (dsl.fetchSingle("SELECT count(*) FROM pg_stat_activity "
                                + "WHERE datname = current_database() AND wait_event_type = 'Lock'")
                        .get(0, Long.class)
                == 0) {
            assertThat(System.nanoTime() - deadline)
                    .as("a lock waiter within 30 s")
                    .isNegative();
            dsl.execute("SELECT pg_sleep(0.01)");
        }
    }

    /**
     * The statements that settle a leased job name its partition (the slot its claim read): jobs
     * of two generations in one heartbeat or one completion are each found in their own. Naming
     * the first job's slot for all of them would complete one of the two.
     */
    @Test
    void leasedJobsOfTwoGenerationsAreSettledEachInItsOwnPartition() {
        queue.enqueue(dsl, NewJob.of("work", "first"));
        Job first = queue.claim("work", 1, Duration.ofMinutes(5), "w").get(0);
        fillCurrentPartition();
        assertThat(generations.step().advanced()).isTrue();
        queue.enqueueAll(
                dsl, List.of(NewJob.of("work", "second"), NewJob.of("work", "third"), NewJob.of("work", "fourth")));
        List<Job> later = queue.claim("work", 3, Duration.ofMinutes(5), "w");
        assertThat(later).hasSize(3);
        assertThat(slotOf(first.id())).isZero();
        assertThat(later).allSatisfy(job -> assertThat(slotOf(job.id())).isOne());

        List<Job> both = List.of(later.get(0), first);
        assertThat(GenerationSeams.leases(dsl).extendAll(both, Duration.ofMinutes(10)))
                .containsExactlyInAnyOrder(first.leaseId(), later.get(0).leaseId());
        assertThat(queue.heartbeat(first, Duration.ofMinutes(10))).isTrue();
        assertThat(queue.release(later.get(1))).isTrue();
        assertThat(queue.fail(dsl, later.get(2), "boom").outcome()).isEqualTo(FailResult.Outcome.RETRY_SCHEDULED);
        assertThat(queue.completeAll(dsl, both)).isEqualTo(2);
        assertThat(dsl.fetch("SELECT kind, status FROM locksmith.jobs WHERE queue = 'work' ORDER BY id")
                        .map(r -> r.get(0) + " " + r.get(1)))
                .containsExactly("third pending", "fourth pending");
    }

    @Test
    void theOldestGenerationsLastJobsMoveKeepingTheirIdsKeysAndOrder() {
        // generation 0: a scheduled unique job, and two keyed jobs in order
        long unique = queue.enqueue(
                dsl,
                NewJob.builder("work", "unique")
                        .uniqueKey("invoice-7")
                        .delay(Duration.ofHours(1))
                        .build());
        long firstKeyed = queue.enqueue(
                dsl, NewJob.builder("work", "k1").orderingKey("account-1").build());
        long secondKeyed = queue.enqueue(
                dsl, NewJob.builder("work", "k2").orderingKey("account-1").build());
        // generations 1 and 2 each keep one scheduled job, so that no slot is free at generation 3
        for (int generation = 0; generation < 3; generation++) {
            fillCurrentPartition();
            assertThat(generations.step().advanced()).isTrue();
            if (generation < 2) {
                queue.enqueue(
                        dsl,
                        NewJob.builder("work", "pin").delay(Duration.ofHours(1)).build());
            }
        }
        assertThat(generation()).isEqualTo(3);
        fillCurrentPartition();
        Generations.Step step = generations.step();
        assertThat(step.advanced()).as("no slot is free").isFalse();
        assertThat(step.moved()).as("generation 0's three jobs").isEqualTo(3);
        assertThat(List.of(slotOf(unique), slotOf(firstKeyed), slotOf(secondKeyed)))
                .containsOnly(3);

        // the unique key still holds, for the same job
        assertThat(queue.enqueue(
                        dsl,
                        NewJob.builder("work", "again").uniqueKey("invoice-7").build()))
                .isEqualTo(unique);
        assertThat(dsl.fetchValue("SELECT job_id FROM locksmith.job_unique_keys WHERE unique_key = 'invoice-7'"))
                .isEqualTo(unique);
        // the keyed jobs still run in id order
        List<Job> claimed = queue.claim("work", 10, Duration.ofMinutes(1), "w");
        assertThat(claimed).extracting(Job::id).containsExactly(firstKeyed);

        // slot 0, now empty, is emptied and becomes the next generation's
        for (int i = 0; i < 40 && !generations.step().advanced(); i++) {
            sleepPastBackoff();
        }
        assertThat(generation()).isEqualTo(4);
        assertThat(slotOf(queue.enqueue(dsl, NewJob.of("work", "next")))).isZero();
    }

    /**
     * Four threads claim and complete 20,000 jobs while the MVCC horizon is held (VACUUM can
     * remove nothing) and a fifth turns the generations as fast as it can: every job completes
     * exactly once, the generations moved and partitions were emptied meanwhile, and the table
     * ends far smaller than the 40,000 dead row versions the jobs left would fill.
     */
    @Test
    void claimsWhileGenerationsTurnUnderAHeldHorizonTakeEveryJobOnce() throws Exception {
        int jobs = 20_000;
        List<Long> ids = new ArrayList<>();
        Set<Long> done = ConcurrentHashMap.newKeySet();
        AtomicInteger duplicates = new AtomicInteger();
        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicInteger advanced = new AtomicInteger();
        AtomicInteger truncated = new AtomicInteger();
        try (Connection holder = pool.getConnection()) {
            holder.setAutoCommit(false);
            try (Statement s = holder.createStatement()) {
                s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                s.execute("SELECT 1");
            }
            List<Integer> perThread = Concurrently.run(6, 300, thread -> {
                if (thread == 0) {
                    for (int batch = 0; batch < jobs / 500; batch++) {
                        List<Long> batchIds = queue.enqueueAll(
                                dsl,
                                Collections.nCopies(
                                        500,
                                        NewJob.builder("work", "j")
                                                .payload(PAYLOAD)
                                                .build()));
                        synchronized (ids) {
                            ids.addAll(batchIds);
                        }
                    }
                    producing.set(false);
                    return 0;
                }
                if (thread == 1) {
                    while (producing.get() || dsl.fetchCount(JOBS) > 0) {
                        Generations.Step step = generations.step();
                        advanced.addAndGet(step.advanced() ? 1 : 0);
                        truncated.addAndGet(step.truncated());
                    }
                    return 0;
                }
                int count = 0;
                while (true) {
                    List<Job> claimed = queue.claim("work", 20, Duration.ofMinutes(5), "w" + thread);
                    if (claimed.isEmpty()) {
                        if (!producing.get() && dsl.fetchCount(JOBS) == 0) {
                            return count;
                        }
                        continue;
                    }
                    for (Job job : claimed) {
                        if (!done.add(job.id())) {
                            duplicates.incrementAndGet();
                        }
                    }
                    assertThat(queue.completeAll(dsl, claimed)).isEqualTo(claimed.size());
                    count += claimed.size();
                }
            });
            assertThat(duplicates).hasValue(0);
            assertThat(done).hasSize(jobs).containsExactlyInAnyOrderElementsOf(ids);
            assertThat(perThread.stream().mapToInt(Integer::intValue).sum()).isEqualTo(jobs);
            assertThat(dsl.fetchCount(JOBS)).isZero();
            assertThat(advanced.get()).as("generations moved on").isGreaterThanOrEqualTo(2);
            assertThat(truncated.get()).as("partitions emptied").isGreaterThanOrEqualTo(1);
            // The horizon is still held, so no VACUUM could remove a row the jobs left: yet every
            // partition but the current one is emptied, as a worker's next steps empty it.
            for (int i = 0; i < 40 && !othersEmpty(); i++) {
                generations.step();
                sleepPastBackoff();
            }
            assertThat(othersEmpty())
                    .as("every partition but the current one, emptied")
                    .isTrue();
            holder.rollback();
        }
    }

    private boolean othersEmpty() {
        int current = (int) (generation() % Generations.SLOTS);
        for (int slot = 0; slot < Generations.SLOTS; slot++) {
            if (slot != current && bytes(slot) > 0) {
                return false;
            }
        }
        return true;
    }

    /** A look at a partition that held jobs, or whose lock was busy, is put off by at least 250 ms. */
    private static void sleepPastBackoff() {
        try {
            Thread.sleep(300);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

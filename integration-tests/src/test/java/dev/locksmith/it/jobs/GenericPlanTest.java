package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.QueueDepth;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * PgJDBC server-prepares a statement from its fifth use on a connection, and PostgreSQL may
 * then cache a generic plan, planned without the bind values. A partial index can serve a claim,
 * or be the arbiter of {@code ON CONFLICT}, only when the planner can prove the index's predicate
 * ({@code status = 'pending'}) from the statement's, which a bound status does not allow: the
 * generic claim plan would scan and sort the whole table. These tests pin that the statuses are
 * literals in the SQL the library sends.
 */
class GenericPlanTest extends DatabaseTest {

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
    }

    @Test
    void uniqueEnqueueClaimAndCompleteKeepWorkingOnOneConnectionUnderGenericPlans() {
        try (var one = TestPostgres.pool(database, 1)) {
            DSLContext single = DSL.using(one, SQLDialect.POSTGRES);
            JobQueue onOne = new JobQueue(single);
            for (int i = 0; i < 30; i++) {
                NewJob job =
                        NewJob.builder("generic", "k").uniqueKey("key-" + i).build();
                long id = onOne.enqueue(single, job);
                assertThat(onOne.enqueue(single, job)).isEqualTo(id);
                List<Job> leased = onOne.claim("generic", 1, Duration.ofMinutes(1), "w");
                assertThat(leased).extracting(Job::id).containsExactly(id);
                boolean completed = single.transactionResult(c -> onOne.complete(c.dsl(), leased.get(0)));
                assertThat(completed).isTrue();
            }
            long forced = single.transactionResult(c -> {
                c.dsl().execute("SET LOCAL plan_cache_mode = force_generic_plan");
                long first = onOne.enqueue(
                        c.dsl(),
                        NewJob.builder("generic", "k").uniqueKey("forced").build());
                assertThat(onOne.enqueue(
                                c.dsl(),
                                NewJob.builder("generic", "k")
                                        .uniqueKey("forced")
                                        .build()))
                        .isEqualTo(first);
                assertThat(onOne.claimInTransaction(c.dsl(), "generic", 10))
                        .extracting(Job::id)
                        .containsExactly(first);
                return first;
            });
            assertThat(onOne.find(single, forced)).isEmpty();
        }
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void theGenericPlanOfATransactionalClaimUsesThePartialIndexOfPendingJobs() {
        // Many finished rows and a few pending ones, so that only the partial index is cheap.
        dsl.execute("INSERT INTO locksmith.jobs (queue, kind, status, finished_at) "
                + "SELECT 'generic', 'k', 'done', now() FROM generate_series(1, 20000)");
        new JobQueue(dsl).enqueueAll(dsl, Collections.nCopies(20, NewJob.of("generic", "k")));
        dsl.execute("ANALYZE locksmith.jobs");

        try (var one = TestPostgres.pool(database, 1)) {
            DSLContext single = DSL.using(one, SQLDialect.POSTGRES);
            JobQueue onOne = new JobQueue(single);
            // PgJDBC server-prepares a statement from its fifth execution on a connection.
            for (int i = 0; i < 10; i++) {
                single.transaction(c -> assertThat(onOne.claimInTransaction(c.dsl(), "generic", 1))
                        .hasSize(1));
            }
            List<String> plan = single.transactionResult(c -> {
                String name = c.dsl()
                        .fetchOne("SELECT name FROM pg_prepared_statements "
                                + "WHERE statement LIKE 'delete from %jobs%' AND from_sql = false")
                        .get(0, String.class);
                assertThat(name).as("the claim is a server-prepared statement").isNotNull();
                c.dsl().execute("SET LOCAL plan_cache_mode = force_generic_plan");
                return c.dsl()
                        .fetch("EXPLAIN EXECUTE " + c.dsl().render(DSL.name(name)) + "('generic')")
                        .getValues(0, String.class);
            });
            System.out.println("generic plan of the transactional claim:\n  " + String.join("\n  ", plan));
            // jobs is partitioned into generations and every job here is in the first one's
            // partition: its claim index, no scan of its rows (the empty partitions may be
            // scanned: they hold nothing to step over)
            assertThat(String.join("\n", plan))
                    .contains("Index Scan using jobs_slot0_claimable_idx on jobs_slot0")
                    .doesNotContain("Seq Scan on jobs_slot0");
        }
    }

    /**
     * A queue that the last ANALYZE did not see, grown since to 50,000 jobs. Planned with its name
     * in view (a custom plan: PgJDBC's first executions of a statement on a connection, and every
     * one behind a transaction pooler with {@code prepareThreshold=0}), a claim that compares the
     * queue with a bare parameter expects a row or two of it, reads all 50,000 and sorts them
     * (PostgreSQL 14 on; 13's costs keep the merge). The library's claim compares it with a value
     * the planner does not see, and merges the partitions' claim indexes in claim order whatever
     * the statistics say.
     */
    @Test
    void aQueueGrownSinceTheLastAnalyzeIsClaimedInIndexOrderNotSortedWhole() throws SQLException {
        dsl.execute("INSERT INTO locksmith.jobs (queue, kind) SELECT 'common', 'k' FROM generate_series(1, 1000)");
        dsl.execute("ANALYZE locksmith.jobs");
        dsl.execute("INSERT INTO locksmith.jobs (queue, kind) SELECT 'burst', 'k' FROM generate_series(1, 50000)");
        JobQueue queue = new JobQueue(dsl);
        try (var one = TestPostgres.pool(database, 1);
                Connection c = one.getConnection()) {
            c.setAutoCommit(false);
            DSLContext tx = DSL.using(c, SQLDialect.POSTGRES);
            // PgJDBC server-prepares a statement from its fifth execution on a connection
            for (int i = 0; i < 6; i++) {
                assertThat(queue.claimInTransaction(tx, "burst", 10)).hasSize(10);
                c.rollback();
            }
            String name = tx.fetchOne("SELECT name FROM pg_prepared_statements "
                            + "WHERE statement LIKE 'delete from %jobs%' AND from_sql = false")
                    .get(0, String.class);
            tx.execute("SET LOCAL plan_cache_mode = force_custom_plan");
            String claim = plan(tx, "EXECUTE " + tx.render(DSL.name(name)) + "('burst')");
            tx.execute("PREPARE naive_claim(text) AS SELECT id FROM locksmith.jobs WHERE queue = $1 "
                    + "AND status = 'pending' AND run_at <= statement_timestamp() "
                    + "ORDER BY priority, run_at, id LIMIT 10 FOR UPDATE SKIP LOCKED");
            String naive = plan(tx, "EXECUTE naive_claim('burst')");
            int version = tx.fetchOne("SHOW server_version_num").get(0, Integer.class);
            c.rollback();
            System.out.println("custom plan of the claim:\n" + claim + "\nwith the bare parameter:\n" + naive);
            assertThat(claim).contains("Merge Append");
            if (version >= 140000) {
                assertThat(naive)
                        .as("the hazard this data sets up")
                        .contains("Sort")
                        .doesNotContain("Merge Append");
            }
        }
    }

    /**
     * The same burst, measured by {@link JobQueue#depth}: its oldest due job is found with an
     * {@code ORDER BY ... LIMIT 1} per priority, which a custom plan expecting a row or two of the
     * queue answered by sorting all 50,000 jobs, once per priority, on every scrape. Its counts
     * stop at the cap on the claim index, whatever the estimate.
     */
    @Test
    void theDepthOfAQueueGrownSinceTheLastAnalyzeIsReadWithoutSortingIt() throws SQLException {
        dsl.execute("INSERT INTO locksmith.jobs (queue, kind) SELECT 'common', 'k' FROM generate_series(1, 1000)");
        dsl.execute("ANALYZE locksmith.jobs");
        dsl.execute("INSERT INTO locksmith.jobs (queue, kind, run_at) "
                + "SELECT 'burst', 'k', now() - interval '1 minute' FROM generate_series(1, 50000)");
        try (var one = TestPostgres.pool(database, 1);
                Connection c = one.getConnection()) {
            DSLContext single = DSL.using(c, SQLDialect.POSTGRES);
            JobQueue queue = new JobQueue(single);
            // PgJDBC server-prepares a statement from its fifth execution on a connection
            for (int i = 0; i < 6; i++) {
                QueueDepth depth = queue.depth("burst", 100);
                assertThat(depth.pending()).isEqualTo(100L);
                assertThat(depth.oldestDuePendingAge())
                        .hasValueSatisfying(age -> assertThat(age).isGreaterThanOrEqualTo(Duration.ofSeconds(59)));
            }
            c.setAutoCommit(false);
            var prepared = single.fetchOne("SELECT name, parameter_types::text[] FROM pg_prepared_statements "
                    + "WHERE statement LIKE '%priorities%' AND from_sql = false");
            assertThat(prepared).as("the depth is a server-prepared statement").isNotNull();
            String arguments = Arrays.stream(prepared.get(1, String[].class))
                    .map(type -> type.contains("char") || type.equals("text") ? "'burst'" : "100")
                    .collect(Collectors.joining(", "));
            single.execute("SET LOCAL plan_cache_mode = force_custom_plan");
            String depth = plan(
                    single,
                    "EXECUTE " + single.render(DSL.name(prepared.get(0, String.class))) + "(" + arguments + ")");
            c.rollback();
            System.out.println("custom plan of the depth:\n" + depth);
            assertThat(depth)
                    .as("no sort of the queue's jobs, no scan of the partition")
                    .doesNotContainPattern("-> +(Incremental )?Sort ")
                    .doesNotContain("Seq Scan on jobs_slot0");
        }
    }

    private static String plan(DSLContext tx, String statement) {
        return String.join("\n", tx.fetch("EXPLAIN " + statement).getValues(0, String.class));
    }
}

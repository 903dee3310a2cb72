package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.schema.AppliedChangeSet;
import dev.locksmith.schema.LocksmithSchema;
import dev.locksmith.schema.SchemaModule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The upgrades to the history table and to generations on a queue with jobs in every state:
 * finished rows move into job_history with their ids, live work moves into the first generation's
 * partition with its ids and unique keys and drains; the rollback moves them back.
 */
class HistoryUpgradeTest {

    private ScratchDatabase database;
    private DSLContext dsl;

    @BeforeEach
    void queueBeforeHistory() {
        database = TestPostgres.freshEmpty("history-upgrade");
        dsl = DSL.using(database.dataSource(), SQLDialect.POSTGRES);
        LocksmithSchema.migrate(database.dataSource(), "locksmith", Set.of(SchemaModule.QUEUE));
        List<AppliedChangeSet> left = LocksmithSchema.rollback(database.dataSource(), "locksmith", 8);
        assertThat(left).extracting(AppliedChangeSet::id).doesNotContain("queue-011-job-history");
        assertThat(dsl.fetchValue(DSL.field("to_regclass('locksmith.job_history') IS NULL", Boolean.class)))
                .isTrue();
    }

    @AfterEach
    void dropDatabase() {
        TestPostgres.drop(database);
    }

    private long insert(String status, String more, String values) {
        return dsl.resultQuery(
                        "INSERT INTO locksmith.jobs (queue, kind, status" + more + ") VALUES ('up', ?, ?" + values
                                + ") RETURNING id",
                        status,
                        status)
                .fetchSingle()
                .get(0, Long.class);
    }

    private List<String> table(String table) {
        return dsl
                .fetchValues("SELECT id || ':' || status || ':' || attempts FROM locksmith." + DSL.name(table)
                        + " ORDER BY id")
                .stream()
                .map(String::valueOf)
                .toList();
    }

    @Test
    void finishedRowsMoveWithTheirIdsAndLiveWorkDrains() throws InterruptedException {
        long due = insert("pending", "", "");
        long later = insert("pending", ", run_at", ", now() + interval '1 hour'");
        long keyed = insert("pending", ", unique_key", ", 'k1'");
        long lapsed = insert(
                "running",
                ", attempts, locked_by, locked_until, lease_id",
                ", 1, 'old-worker', now() - interval '1 minute', gen_random_uuid()");
        long held = insert(
                "running",
                ", attempts, locked_by, locked_until, lease_id",
                ", 1, 'live-worker', now() + interval '1 hour', gen_random_uuid()");
        long done = insert("done", ", finished_at", ", now() - interval '3 days'");
        long failed = insert("failed", ", attempts, last_error, finished_at", ", 25, 'gave up', now()");
        long cancelled = insert("cancelled", ", finished_at", ", now() - interval '1 hour'");
        long noFinish = insert("done", "", "");
        List<String> liveBefore = new ArrayList<>(table("jobs"));
        liveBefore.removeIf(r -> r.contains(":done:") || r.contains(":failed:") || r.contains(":cancelled:"));

        List<AppliedChangeSet> applied =
                LocksmithSchema.migrate(database.dataSource(), "locksmith", Set.of(SchemaModule.QUEUE));

        assertThat(applied)
                .extracting(AppliedChangeSet::id)
                .containsExactly(
                        "queue-011-job-history",
                        "queue-012-citus-distribute-job-history",
                        "queue-013-fence",
                        "queue-014-jobs-slot",
                        "queue-015-jobs-generations",
                        "queue-016-job-slot-inlined",
                        "queue-017-concurrency-limits",
                        "queue-018-citus-concurrency-limits");
        assertThat(table("jobs")).as("live work untouched").isEqualTo(liveBefore);
        assertThat(table("jobs_slot0"))
                .as("in the first generation's partition")
                .isEqualTo(liveBefore);
        assertThat(dsl.fetchValue("SELECT job_id FROM locksmith.job_unique_keys WHERE unique_key = 'k1'"))
                .as("the live unique key, taken by its job")
                .isEqualTo(keyed);
        assertThat(table("job_history"))
                .containsExactly(
                        done + ":done:0", failed + ":failed:25", cancelled + ":cancelled:0", noFinish + ":done:0");
        List<String> partitions = dsl
                .fetchValues("SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                        + "WHERE i.inhparent = 'locksmith.job_history'::regclass ORDER BY 1")
                .stream()
                .map(String::valueOf)
                .toList();
        assertThat(partitions)
                .hasSize(2)
                .contains("job_history_default")
                .anySatisfy(n -> assertThat(n).matches("job_history_p\\d{8}_\\d{8}"));

        JobQueue queue =
                new JobQueue(dsl, JobQueueConfig.builder().keepCompleted(true).build());
        assertThat(queue.find(dsl, failed).orElseThrow().lastError()).isEqualTo("gave up");
        assertThat(queue.enqueue(
                        dsl,
                        dev.locksmith.jobs.NewJob.builder("up", "again")
                                .uniqueKey("k1")
                                .build()))
                .as("the key is still held")
                .isEqualTo(keyed);
        assertThat(queue.find(dsl, done).orElseThrow().status()).isEqualTo(JobStatus.DONE);
        assertThat(queue.rescueExpired()).isEqualTo(1);
        assertThat(queue.retry(dsl, failed)).isTrue();
        List<Long> drained = new ArrayList<>();
        Await.until("the due jobs drain", Duration.ofSeconds(30), () -> {
            List<Job> claimed = queue.claim("up", 10, Duration.ofMinutes(1), "new-worker");
            dsl.transaction(c -> queue.completeAll(c.dsl(), claimed));
            claimed.forEach(j -> drained.add(j.id()));
            return drained.size() >= 4;
        });
        assertThat(drained).containsExactlyInAnyOrder(due, keyed, lapsed, failed);
        assertThat(table("jobs")).containsExactly(later + ":pending:0", held + ":running:1");
        assertThat(queue.deleteFinishedOlderThan(Duration.ofDays(1), 100))
                .as("the finished-3-days-ago row, within the upgrade's partition")
                .isEqualTo(1);
        assertThat(queue.find(dsl, done)).isEmpty();
        long next = queue.enqueue(dsl, dev.locksmith.jobs.NewJob.of("up", "after"));
        assertThat(next).as("the id sequence carries on").isGreaterThan(noFinish);
    }

    @Test
    void aRoleThatUsedJobsStillMayAfterTheUpgradeAndItsRollback() {
        String role = "upgrade_app_" + java.util.UUID.randomUUID().toString().substring(0, 8);
        org.jooq.Name name = DSL.name(role);
        dsl.execute("CREATE ROLE {0}", name);
        try {
            dsl.execute("GRANT USAGE ON SCHEMA locksmith TO {0}", name);
            dsl.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON locksmith.jobs TO {0}", name);
            dsl.execute("GRANT USAGE ON SEQUENCE locksmith.jobs_id_seq TO {0}", name);
            LocksmithSchema.migrate(database.dataSource(), "locksmith", Set.of(SchemaModule.QUEUE));
            assertThat(dsl.fetchValue(
                            "SELECT has_table_privilege(?, 'locksmith.jobs', 'INSERT') "
                                    + "AND has_table_privilege(?, 'locksmith.jobs_slot3', 'DELETE') "
                                    + "AND has_table_privilege(?, 'locksmith.job_unique_keys', 'INSERT') "
                                    + "AND has_sequence_privilege(?, 'locksmith.job_generation', 'USAGE')",
                            role,
                            role,
                            role,
                            role))
                    .as("the new jobs, its partitions, job_unique_keys and job_generation")
                    .isEqualTo(true);
            LocksmithSchema.rollback(database.dataSource(), "locksmith", 8);
            assertThat(dsl.fetchValue("SELECT has_table_privilege(?, 'locksmith.jobs', 'INSERT')", role))
                    .as("the table that is jobs again")
                    .isEqualTo(true);
        } finally {
            dsl.execute("DROP OWNED BY {0}", name);
            dsl.execute("DROP ROLE {0}", name);
        }
    }

    @Test
    void rollbackMovesHistoryBackIntoJobs() {
        long done = insert("done", ", finished_at", ", now()");
        long pending = insert("pending", "", "");
        LocksmithSchema.migrate(database.dataSource(), "locksmith", Set.of(SchemaModule.QUEUE));
        assertThat(table("jobs")).containsExactly(pending + ":pending:0");

        LocksmithSchema.rollback(database.dataSource(), "locksmith", 8);

        assertThat(table("jobs")).containsExactly(done + ":done:0", pending + ":pending:0");
        assertThat(dsl.fetchValue(DSL.field("to_regclass('locksmith.job_history') IS NULL", Boolean.class)))
                .isTrue();
    }
}

package dev.locksmith.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.schema.AppliedChangeSet;
import dev.locksmith.schema.LocksmithSchema;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The changelog on empty databases: apply, re-apply, roll back, and two migrators racing. */
class SchemaMigrationTest {

    static final int CHANGE_SETS = 41;

    static final Set<String> TABLES = Set.of(
            "channel_accounts",
            "channel_account_leases",
            "jobs",
            "job_history",
            "job_unique_keys",
            "job_concurrency_limits",
            "job_key_starts",
            "schedules",
            "accounts",
            "lock_wait_event",
            "deadlock_event",
            "account_transfers");

    private ScratchDatabase database;
    private DSLContext dsl;

    @BeforeEach
    void emptyDatabase() {
        database = TestPostgres.freshEmpty("migration");
        dsl = DSL.using(database.dataSource(), SQLDialect.POSTGRES);
    }

    @AfterEach
    void dropDatabase() {
        TestPostgres.drop(database);
    }

    private List<String> locksmithTables() {
        return dsl
                .fetchValues(
                        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'locksmith' "
                                + "AND table_name::text = ANY(?) ORDER BY 1",
                        (Object) TABLES.toArray(String[]::new))
                .stream()
                .map(String::valueOf)
                .toList();
    }

    /** Every column of the locksmith schema with its type and default: the shape to compare. */
    private List<String> schemaShape() {
        return dsl.fetch("SELECT table_name || '.' || column_name || ':' || data_type || ':' "
                        + "|| coalesce(column_default, '') FROM information_schema.columns "
                        + "WHERE table_schema = 'locksmith' ORDER BY table_name, ordinal_position")
                .getValues(0, String.class);
    }

    @Test
    void appliesToAnEmptyDatabaseAndAgainIsANoOp() {
        List<AppliedChangeSet> first = LocksmithSchema.migrate(database.dataSource());
        assertThat(first)
                .extracting(AppliedChangeSet::id)
                .containsExactly(
                        "queue-000-schema",
                        "queue-001-move-jobs-from-0.1",
                        "queue-002-jobs",
                        "queue-003-jobs-autovacuum",
                        "queue-004-jobs-lease-id",
                        "queue-005-jobs-traceparent",
                        "queue-006-schedules",
                        "queue-007-jobs-ordering-key",
                        "queue-008-jobs-no-vacuum-truncate",
                        "queue-009-citus-distribute-jobs",
                        "queue-010-schedules-ordering-key",
                        "queue-011-job-history",
                        "queue-012-citus-distribute-job-history",
                        "queue-013-fence",
                        "queue-014-jobs-slot",
                        "queue-015-jobs-generations",
                        "queue-016-job-slot-inlined",
                        "queue-017-concurrency-limits",
                        "queue-018-citus-concurrency-limits",
                        "pool-000-schema",
                        "pool-001-move-channel_accounts-from-0.1",
                        "pool-002-channel-accounts",
                        "pool-003-channel-accounts-slot",
                        "pool-004-channel_accounts-autovacuum",
                        "pool-005-channel-accounts-bucket",
                        "pool-006-citus-distribute-channel-accounts",
                        "pool-007-channel-accounts-fence",
                        "pool-008-channel-account-leases",
                        "pool-009-citus-distribute-channel-account-leases",
                        "pool-010-channel-account-leases-by-fence",
                        "accounts-000-schema",
                        "accounts-001-move-accounts-from-0.1",
                        "accounts-002-accounts",
                        "accounts-003-account-transfers",
                        "accounts-004-citus-distribute-accounts",
                        "audit-000-schema",
                        "audit-001-move-lock_wait_event-from-0.1",
                        "audit-002-move-deadlock_event-from-0.1",
                        "audit-003-lock-wait-event",
                        "audit-004-deadlock-event",
                        "audit-005-retention-index");
        assertThat(first).allSatisfy(c -> assertThat(c.file()).startsWith("locksmith/"));
        assertThat(locksmithTables()).containsExactlyInAnyOrderElementsOf(TABLES);
        List<String> shape = schemaShape();

        List<AppliedChangeSet> second = LocksmithSchema.migrate(database.dataSource());

        assertThat(second).isEmpty();
        assertThat(schemaShape()).isEqualTo(shape);
        assertThat(LocksmithSchema.appliedChangeSets(database.dataSource())).hasSize(CHANGE_SETS);
    }

    @Test
    void rollingBackEveryChangeSetLeavesNoLocksmithTable() {
        LocksmithSchema.migrate(database.dataSource());

        List<AppliedChangeSet> remaining = LocksmithSchema.rollback(database.dataSource(), CHANGE_SETS);

        assertThat(remaining).isEmpty();
        assertThat(locksmithTables()).isEmpty();
        // and it can be applied again from there
        assertThat(LocksmithSchema.migrate(database.dataSource())).hasSize(CHANGE_SETS);
        assertThat(locksmithTables()).hasSize(TABLES.size());
    }

    @Test
    void twoMigratorsStartedTogetherBothFinishAndApplyEachChangeSetOnce() throws Exception {
        DataSource ds = database.dataSource();

        List<List<AppliedChangeSet>> applied = Concurrently.run(2, 120, thread -> LocksmithSchema.migrate(ds));

        assertThat(applied.get(0).size() + applied.get(1).size()).isEqualTo(CHANGE_SETS);
        assertThat(LocksmithSchema.appliedChangeSets(ds))
                .extracting(AppliedChangeSet::id)
                .doesNotHaveDuplicates()
                .hasSize(CHANGE_SETS);
        assertThat(locksmithTables()).containsExactlyInAnyOrderElementsOf(TABLES);
    }
}

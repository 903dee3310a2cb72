package dev.locksmith.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.exception.SchemaNotAppliedException;
import dev.locksmith.it.support.EmptyDatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.schema.AppliedChangeSet;
import dev.locksmith.schema.LocksmithSchema;
import dev.locksmith.schema.SchemaMigrationException;
import dev.locksmith.schema.SchemaModule;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import liquibase.Scope;
import liquibase.command.CommandScope;
import liquibase.command.core.UpdateCommandStep;
import liquibase.command.core.helpers.DbUrlConnectionArgumentsCommandStep;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;

/**
 * Where the tables live: a schema of their own (any valid name), modules applied alone, clashes
 * refused before anything is applied, and databases of 0.1.0 (tables in the default schema)
 * upgraded with their rows.
 */
class SchemaPlacementTest extends EmptyDatabaseTest {

    @Override
    protected String databaseName() {
        return "placement";
    }

    private List<String> tablesIn(String schema) {
        return dsl.fetchValues("SELECT tablename::text FROM pg_tables WHERE schemaname = ? ORDER BY 1", schema).stream()
                .map(String::valueOf)
                .toList();
    }

    /** Every row of the user's own tables, as text, to compare before and after. */
    private List<String> usersRows() {
        return dsl.fetch("SELECT 'jobs:' || j::text FROM public.jobs j UNION ALL "
                        + "SELECT 'accounts:' || a::text FROM public.accounts a ORDER BY 1")
                .getValues(0, String.class);
    }

    @Test
    void aCustomSchemaLeavesTheUsersOwnTablesOfTheSameNamesUntouched() throws Exception {
        dsl.execute("CREATE TABLE public.jobs (id serial PRIMARY KEY, title text NOT NULL)");
        dsl.execute("CREATE TABLE public.accounts (owner text PRIMARY KEY, plan text)");
        dsl.execute("INSERT INTO public.jobs (title) VALUES ('write report'), ('ship it')");
        dsl.execute("INSERT INTO public.accounts VALUES ('ada', 'pro'), ('bob', 'free')");
        List<String> before = usersRows();

        LocksmithSchema.migrate(pool, "billing_locks", EnumSet.allOf(SchemaModule.class));
        assertThat(tablesIn("billing_locks"))
                .containsExactlyInAnyOrder(
                        "jobs",
                        "job_history",
                        "job_history_default",
                        "job_concurrency_limits",
                        "job_key_starts",
                        "job_unique_keys",
                        "jobs_slot0",
                        "jobs_slot1",
                        "jobs_slot2",
                        "jobs_slot3",
                        "schedules",
                        "accounts",
                        "account_transfers",
                        "channel_accounts",
                        "channel_account_leases",
                        "channel_account_leases_slot0",
                        "channel_account_leases_slot1",
                        "channel_account_leases_slot2",
                        "channel_account_leases_slot3",
                        "lock_wait_event",
                        "deadlock_event");

        DSLContext mapped =
                Locksmith.builder(dsl).schema("billing_locks").build().dsl();
        JobQueue queue = new JobQueue(mapped);
        long id = queue.enqueue(dsl, NewJob.of("q", "k")); // a caller's plain DSLContext is mapped too
        Job leased = queue.claim("q", 1, Duration.ofMinutes(1), "w").get(0);
        assertThat(leased.id()).isEqualTo(id);
        Boolean completed = dsl.transactionResult(c -> queue.complete(c.dsl(), leased));
        assertThat(completed).isTrue();
        queue.enqueue(mapped, NewJob.of("q", "k"));
        dsl.transaction(
                c -> assertThat(queue.claimInTransaction(c.dsl(), "q", 5)).hasSize(1));
        // a unique key's insert draws its ids from the sequence and takes the key itself: mapped too
        long unique =
                queue.enqueue(dsl, NewJob.builder("q", "u").uniqueKey("once").build());
        assertThat(queue.enqueue(
                        mapped, NewJob.builder("q", "u").uniqueKey("once").build()))
                .isEqualTo(unique);

        Accounts accounts = new Accounts(mapped);
        Account a = accounts.open(new BigDecimal("10.00"));
        Account b = accounts.open(dsl, new BigDecimal("0.00"));
        for (TransferStrategy strategy : TransferStrategy.values()) {
            assertThat(accounts.transfer(a.id(), b.id(), new BigDecimal("1.00"), strategy)
                            .transferred())
                    .isTrue();
        }
        assertThat(accounts.get(dsl, b.id()).balance()).isEqualByComparingTo("4.00");

        ChannelAccountPool channels = new ChannelAccountPool(mapped);
        channels.register(dsl, List.of("GA", "GB"));
        ChannelAccount held = channels.acquire(Duration.ofMinutes(1), "me").orElseThrow();
        dsl.transaction(c -> channels.release(c.dsl(), held.publicKey(), "me"));

        CountDownLatch handled = new CountDownLatch(1);
        queue.enqueue(dsl, NewJob.of("worked", "k"));
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(
                                Locksmith.builder(pool).schema("billing_locks").build()),
                        "worked",
                        (job, tx) -> handled.countDown())
                .threads(1)
                .listen(false)
                .pollInterval(Duration.ofMillis(50))
                .build()
                .start()) {
            assertThat(handled.await(30, TimeUnit.SECONDS)).isTrue();
        }

        assertThat(dsl.fetchValue("SELECT count(*) FROM billing_locks.accounts", Long.class))
                .isEqualTo(2L);
        assertThat(dsl.fetchValue("SELECT count(*) FROM billing_locks.channel_accounts", Long.class))
                .isEqualTo(2L);
        assertThat(usersRows()).isEqualTo(before);
        assertThat(tablesIn("public")).containsOnly("jobs", "accounts", "databasechangelog", "databasechangeloglock");
    }

    @Test
    void oneModuleAloneCreatesOnlyItsTablesAndTheOthersFailClearly() throws Exception {
        List<AppliedChangeSet> applied = LocksmithSchema.migrate(pool, "locksmith", Set.of(SchemaModule.QUEUE));
        assertThat(applied).extracting(AppliedChangeSet::id).allMatch(id -> id.startsWith("queue-"));
        assertThat(tablesIn("locksmith"))
                .containsExactlyInAnyOrder(
                        "jobs",
                        "jobs_slot0",
                        "jobs_slot1",
                        "jobs_slot2",
                        "jobs_slot3",
                        "job_unique_keys",
                        "job_history",
                        "job_history_default",
                        "job_concurrency_limits",
                        "job_key_starts",
                        "schedules");

        JobQueue queue = new JobQueue(dsl);
        CountDownLatch handled = new CountDownLatch(1);
        queue.enqueue(dsl, NewJob.of("alone", "k"));
        try (JobWorker worker = JobWorker.builder(pool, "alone", (job, tx) -> handled.countDown())
                .threads(1)
                .listen(false)
                .pollInterval(Duration.ofMillis(50))
                .build()
                .start()) {
            assertThat(handled.await(30, TimeUnit.SECONDS)).isTrue();
        }

        Accounts accounts = new Accounts(dsl);
        assertThatThrownBy(() -> accounts.open(BigDecimal.ONE))
                .isInstanceOfSatisfying(SchemaNotAppliedException.class, e -> {
                    assertThat(e.module()).isEqualTo("ACCOUNTS");
                    assertThat(e)
                            .hasMessageContaining("locksmith.accounts")
                            .hasMessageContaining("SchemaModule.ACCOUNTS");
                });
        // and adding a module later works
        LocksmithSchema.migrate(pool, "locksmith", Set.of(SchemaModule.ACCOUNTS));
        assertThat(accounts.open(BigDecimal.ONE).balance()).isEqualByComparingTo("1.00");
    }

    @Test
    void aClashingTableHaltsTheMigrationBeforeAnythingIsApplied() {
        dsl.execute("CREATE SCHEMA shared");
        dsl.execute("CREATE TABLE shared.deadlock_event (id int)");

        assertThatThrownBy(() -> LocksmithSchema.migrate(pool, "shared", EnumSet.allOf(SchemaModule.class)))
                .isInstanceOf(SchemaMigrationException.class)
                .hasMessageContaining("schema shared already has an object named deadlock_event")
                .hasMessageContaining("nothing was applied");
        assertThat(LocksmithSchema.appliedChangeSets(pool)).isEmpty();
        assertThat(tablesIn("shared")).containsExactly("deadlock_event");

        // a subset of modules is checked as a whole too: the queue module is not applied either
        assertThatThrownBy(() ->
                        LocksmithSchema.migrate(pool, "shared", EnumSet.of(SchemaModule.QUEUE, SchemaModule.AUDIT)))
                .isInstanceOf(SchemaMigrationException.class)
                .hasMessageContaining("deadlock_event");
        assertThat(tablesIn("shared")).containsExactly("deadlock_event");
    }

    @Test
    void aClashWithANameTheGenerationsOrTheHistoryUseHaltsTheMigrationToo() {
        dsl.execute("CREATE SCHEMA shared");
        dsl.execute("CREATE TABLE shared.job_unique_keys (id int)");
        assertThatThrownBy(() -> LocksmithSchema.migrate(pool, "shared", EnumSet.of(SchemaModule.QUEUE)))
                .isInstanceOf(SchemaMigrationException.class)
                .hasMessageContaining("schema shared already has an object named jobs_slot0")
                .hasMessageContaining("job_unique_keys")
                .hasMessageContaining("nothing was applied");
        assertThat(LocksmithSchema.appliedChangeSets(pool)).isEmpty();

        dsl.execute("DROP TABLE shared.job_unique_keys");
        dsl.execute("CREATE FUNCTION shared.job_slot() RETURNS int LANGUAGE sql AS 'SELECT 7'");
        assertThatThrownBy(() -> LocksmithSchema.migrate(pool, "shared", EnumSet.of(SchemaModule.QUEUE)))
                .isInstanceOf(SchemaMigrationException.class)
                .hasMessageContaining("job_slot");
        dsl.execute("DROP FUNCTION shared.job_slot()");

        dsl.execute("CREATE VIEW shared.job_history AS SELECT 1 AS id");
        assertThatThrownBy(() -> LocksmithSchema.migrate(pool, "shared", EnumSet.of(SchemaModule.QUEUE)))
                .isInstanceOf(SchemaMigrationException.class)
                .hasMessageContaining("schema shared already has an object named job_history");
        assertThat(LocksmithSchema.appliedChangeSets(pool)).isEmpty();
        assertThat(tablesIn("shared")).isEmpty();

        // locksmith's own objects pass the checks on the next update
        dsl.execute("DROP VIEW shared.job_history");
        LocksmithSchema.migrate(pool, "shared", EnumSet.of(SchemaModule.QUEUE));
        assertThat(LocksmithSchema.migrate(pool, "shared", EnumSet.of(SchemaModule.QUEUE)))
                .isEmpty();
    }

    @Test
    void aFailureAfterTheChecksKeepsTheChangeSetsAppliedBeforeIt() {
        // not a table of locksmith's, so the clash checks pass; but the jobs change set creates an
        // index of this name after its table, and fails there
        dsl.execute("CREATE SCHEMA locksmith");
        dsl.execute("CREATE TABLE locksmith.unrelated (x int)");
        dsl.execute("CREATE INDEX jobs_claimable_idx ON locksmith.unrelated (x)");

        assertThatThrownBy(() -> LocksmithSchema.migrate(pool))
                .isInstanceOf(SchemaMigrationException.class)
                .hasMessageContaining("jobs_claimable_idx");

        // the change sets before it stay applied; the failed one left nothing (its table is gone too)
        assertThat(LocksmithSchema.appliedChangeSets(pool))
                .extracting(AppliedChangeSet::id)
                .containsExactly("queue-000-schema", "queue-001-move-jobs-from-0.1");
        assertThat(tablesIn("locksmith")).containsExactly("unrelated");
        dsl.execute("DROP TABLE locksmith.unrelated");
        assertThat(LocksmithSchema.migrate(pool)).hasSize(SchemaMigrationTest.CHANGE_SETS - 2);
    }

    @Test
    void invalidSchemaNamesAreRejectedBeforeAnySqlRuns() {
        List<String> malformed =
                List.of("", "a;drop", "Locksmith", "1abc", "x".repeat(64), "pg_locks", "has space", "bad\"quote", "é");
        for (String bad : malformed) {
            assertThatThrownBy(() -> LocksmithSchema.migrate(pool, bad, EnumSet.allOf(SchemaModule.class)))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("schema");
            assertThatThrownBy(() -> Locksmith.builder(dsl).schema(bad).build().dsl())
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class);
        }
        for (String reserved : List.of("select", "user", "table")) {
            assertThatThrownBy(() -> LocksmithSchema.migrate(pool, reserved, EnumSet.allOf(SchemaModule.class)))
                    .as(reserved)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reserved word");
        }
        assertThat(LocksmithSchema.appliedChangeSets(pool))
                .as("nothing ran, not even Liquibase's own tables")
                .isEmpty();
        assertThat(dsl.fetchValue("SELECT to_regclass('databasechangelog')")).isNull();
        assertThat(LocksmithSchema.migrate(pool, "x".repeat(63), Set.of(SchemaModule.AUDIT)))
                .isNotEmpty();
        assertThatThrownBy(() -> LocksmithSchema.migrate(pool, "ok", Set.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("modules");
    }

    @Test
    void aDatabaseMigratedByVersion010IsUpgradedWithEveryRowKept() throws Exception {
        applyLegacyChangelog();
        dsl.execute("INSERT INTO public.jobs (queue, kind, payload) VALUES ('q', 'legacy', '{\"n\": 1}')");
        dsl.execute("INSERT INTO public.accounts (balance) VALUES (12.34)");
        dsl.execute("INSERT INTO public.channel_accounts (public_key) VALUES ('GLEGACY')");
        dsl.execute("INSERT INTO public.deadlock_event (txn_ids) VALUES ('[]')");
        dsl.execute("INSERT INTO public.lock_wait_event (waiter_txn_id, resource_id, wait_start, wait_end, outcome) "
                + "VALUES (gen_random_uuid(), 'r', now(), now(), 'acquired')");

        LocksmithSchema.migrate(pool);

        assertThat(tablesIn("public")).containsOnly("databasechangelog", "databasechangeloglock");
        assertThat(tablesIn("locksmith"))
                .containsExactlyInAnyOrder(
                        "jobs",
                        "job_history",
                        "job_history_default",
                        "job_concurrency_limits",
                        "job_key_starts",
                        "job_unique_keys",
                        "jobs_slot0",
                        "jobs_slot1",
                        "jobs_slot2",
                        "jobs_slot3",
                        "schedules",
                        "accounts",
                        "account_transfers",
                        "channel_accounts",
                        "channel_account_leases",
                        "channel_account_leases_slot0",
                        "channel_account_leases_slot1",
                        "channel_account_leases_slot2",
                        "channel_account_leases_slot3",
                        "lock_wait_event",
                        "deadlock_event");
        Map<String, Object> counts = dsl.fetchOne("SELECT (SELECT count(*) FROM locksmith.jobs) AS jobs, "
                        + "(SELECT count(*) FROM locksmith.accounts) AS accounts, "
                        + "(SELECT count(*) FROM locksmith.channel_accounts) AS channels, "
                        + "(SELECT count(*) FROM locksmith.deadlock_event) AS deadlocks, "
                        + "(SELECT count(*) FROM locksmith.lock_wait_event) AS waits")
                .intoMap();
        assertThat(counts.values()).allMatch(v -> ((Number) v).longValue() == 1);
        // the repositories see the moved rows, and the sequences moved with their tables
        JobQueue queue = new JobQueue(dsl);
        Job legacy = queue.claim("q", 1, Duration.ofMinutes(1), "w").get(0);
        assertThat(legacy.kind()).isEqualTo("legacy");
        assertThat(legacy.leaseId()).isNotNull();
        assertThat(queue.enqueue(dsl, NewJob.of("q", "k"))).isGreaterThan(legacy.id());
        assertThat(new Accounts(dsl).open(BigDecimal.ONE).id()).isGreaterThan(1L);
        // and migrating again is a no-op
        assertThat(LocksmithSchema.migrate(pool)).isEmpty();
    }

    @Test
    void aVersion010DatabaseMigratedIntoASchemaWithTheUsersOwnJobsTableHaltsWithNothingApplied() throws Exception {
        applyLegacyChangelog();
        int before = LocksmithSchema.appliedChangeSets(pool).size();
        dsl.execute("CREATE SCHEMA theirs");
        dsl.execute("CREATE TABLE theirs.jobs (title text)");
        dsl.execute("INSERT INTO theirs.jobs VALUES ('keep me')");

        assertThatThrownBy(() -> LocksmithSchema.migrate(pool, "theirs", EnumSet.allOf(SchemaModule.class)))
                .isInstanceOf(SchemaMigrationException.class)
                .hasMessageContaining("schema theirs already has an object named jobs");
        assertThat(LocksmithSchema.appliedChangeSets(pool)).hasSize(before);
        assertThat(tablesIn("theirs")).containsExactly("jobs");
        assertThat(dsl.fetchValue("SELECT string_agg(column_name::text, ',') FROM information_schema.columns "
                        + "WHERE table_schema = 'theirs' AND table_name = 'jobs'"))
                .isEqualTo("title");
    }

    /** The 0.1.0 changelog (tables in the default schema), as it shipped; kept in test resources. */
    private void applyLegacyChangelog() throws Exception {
        try (var connection = pool.getConnection()) {
            Database db =
                    DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(connection));
            Scope.child(
                    Map.of(
                            Scope.Attr.resourceAccessor.name(),
                            new ClassLoaderResourceAccessor(getClass().getClassLoader()),
                            "liquibase.analytics.enabled",
                            false),
                    () -> new CommandScope(UpdateCommandStep.COMMAND_NAME)
                            .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, db)
                            .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, "legacy-0.1.0/changelog.xml")
                            .execute());
        }
        assertThat(tablesIn("public")).contains("jobs", "accounts", "channel_accounts");
    }
}

package dev.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.provisioning.ScratchDatabase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** locksmith.schema.*: the migration, its order before every database user and every worker, and opting out. */
class SchemaMigrationTest {

    /** What happened, in order, across the beans of one context. */
    static final List<String> EVENTS = new CopyOnWriteArrayList<>();

    static CountDownLatch handled;

    @Test
    void theSchemaIsMigratedBeforeAnyBeanUsesTheDatabaseAndBeforeAnyWorkerStarts() throws Exception {
        ScratchDatabase database = TestDatabases.empty("migrate");
        EVENTS.clear();
        handled = new CountDownLatch(1);
        TestDatabases.runner(database)
                .withUserConfiguration(EarlyUser.class)
                .withPropertyValues("locksmith.queues.early.threads=1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(handled.await(30, TimeUnit.SECONDS))
                            .as("the early job was handled")
                            .isTrue();
                    LocksmithSchemaMigration migration = context.getBean(LocksmithSchemaMigration.class);
                    assertThat(migration.schema()).isEqualTo("locksmith");
                    assertThat(migration.appliedChangeSets()).isNotEmpty();
                    long id = Long.parseLong(EVENTS.get(1).substring("enqueued ".length()));
                    // migrated (before Boot's DSLContext existed), then a bean that only knows Boot's
                    // DSLContext enqueued in its constructor, then the worker, started after the
                    // context was refreshed, handled that job
                    assertThat(EVENTS).containsExactly("migrated", "enqueued " + id, "handled " + id);
                });
    }

    @Test
    void migrateFalseCreatesNothingInTheDatabase() {
        ScratchDatabase database = TestDatabases.empty("nomigrate");
        TestDatabases.runner(database)
                .withPropertyValues("locksmith.schema.migrate=false")
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(LocksmithSchemaMigration.class);
                    assertThat(context).hasSingleBean(JobQueue.class);
                    DSLContext dsl = DSL.using(database.dataSource(), SQLDialect.POSTGRES);
                    assertThat(dsl.fetchValue("SELECT count(*) FROM pg_namespace WHERE nspname = ?", "locksmith"))
                            .isEqualTo(0L);
                    assertThat(dsl.fetchValue("SELECT to_regclass('databasechangelog') IS NULL"))
                            .isEqualTo(true);
                });
    }

    @Test
    void anotherSchemaAndSomeModulesOnly() {
        ScratchDatabase database = TestDatabases.empty("billing");
        TestDatabases.runner(database)
                .withPropertyValues("locksmith.schema.name=billing_locks", "locksmith.schema.modules=queue")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    DSLContext boot = context.getBean(DSLContext.class);
                    long id = context.getBean(JobQueue.class).enqueue(boot, NewJob.of("billing", "invoice"));
                    DSLContext dsl = DSL.using(database.dataSource(), SQLDialect.POSTGRES);
                    assertThat(dsl.fetchValue("SELECT kind FROM billing_locks.jobs WHERE id = ?", id))
                            .isEqualTo("invoice");
                    List<String> tables = dsl.fetch(
                                    "SELECT table_name::text FROM information_schema.tables WHERE table_schema = ? "
                                            + "ORDER BY table_name::text COLLATE \"C\"",
                                    "billing_locks")
                            .getValues(0, String.class);
                    assertThat(tables)
                            .containsExactly(
                                    "job_concurrency_limits",
                                    "job_history",
                                    "job_history_default",
                                    "job_key_starts",
                                    "job_unique_keys",
                                    "jobs",
                                    "jobs_slot0",
                                    "jobs_slot1",
                                    "jobs_slot2",
                                    "jobs_slot3",
                                    "schedules"); // the queue module's tables
                    assertThat(dsl.fetchValue("SELECT count(*) FROM pg_namespace WHERE nspname = ?", "locksmith"))
                            .isEqualTo(0L);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class EarlyUser {

        @Bean
        static BeanPostProcessor migrationRecorder() {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String beanName) {
                    if (bean instanceof LocksmithSchemaMigration) {
                        EVENTS.add("migrated");
                    }
                    return bean;
                }
            };
        }

        /** Knows only Boot's DSLContext, and uses it at once: it must find the tables. */
        @Bean
        Object earlyEnqueuer(DSLContext dsl) {
            long id = new JobQueue(dsl).enqueue(dsl, NewJob.of("early", "first"));
            EVENTS.add("enqueued " + id);
            return id;
        }

        @Bean
        @LocksmithHandler(queue = "early")
        dev.locksmith.jobs.JobHandler early() {
            return (Job job, DSLContext tx) -> {
                EVENTS.add("handled " + job.id());
                handled.countDown();
            };
        }
    }
}

package dev.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Transactions;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.advisory.AdvisoryLocks;
import dev.locksmith.audit.BlockingReport;
import dev.locksmith.audit.LockAudit;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.micrometer.LocksmithMetrics;
import dev.locksmith.opentelemetry.LocksmithTracing;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.provisioning.ScratchDatabase;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Which beans the starter makes, on a migrated database (migration itself: SchemaMigrationTest). */
class LocksmithAutoConfigurationTest {

    /** Whether Spring Boot 3's health API (Actuator's) is on the class path. */
    private static final boolean BOOT_3_HEALTH = org.springframework.util.ClassUtils.isPresent(
            "org.springframework.boot.actuate.health.AbstractHealthIndicator", null);

    private static ScratchDatabase database;

    @BeforeAll
    static void database() {
        database = TestDatabases.migrated("autoconfig");
    }

    private static ApplicationContextRunner runner() {
        return TestDatabases.runner(database).withPropertyValues("locksmith.schema.migrate=false");
    }

    @Test
    void everyRepositoryIsABeanOnBootsDslContextAndWorks() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            for (Class<?> type : List.of(
                    JobQueue.class,
                    ChannelAccountPool.class,
                    Accounts.class,
                    AdvisoryLocks.class,
                    LockAudit.class,
                    BlockingReport.class,
                    Transactions.class,
                    LocksmithProperties.class,
                    LocksmithWorkers.class)) {
                assertThat(context).as(type.getSimpleName()).hasSingleBean(type);
            }
            // by name: on Spring Boot 4 (no Boot 3 health API) there is none, and its class cannot load
            assertThat(context.containsBean("locksmithHealthIndicator")).isEqualTo(BOOT_3_HEALTH);
            // no MeterRegistry, no OpenTelemetry bean: no observers; migrate=false: no migration
            assertThat(context)
                    .doesNotHaveBean(LocksmithMetrics.class)
                    .doesNotHaveBean(LocksmithTracing.class)
                    .doesNotHaveBean(LocksmithSchemaMigration.class);
            assertThat(context.getBean(LocksmithWorkers.class).queues()).isEmpty();
            assertThat(context.getBean(LocksmithWorkers.class).isRunning()).isTrue();

            DSLContext dsl = context.getBean(DSLContext.class);
            long id = context.getBean(JobQueue.class).enqueue(dsl, NewJob.of("autoconfig", "works"));
            assertThat(dsl.fetchValue("SELECT kind FROM locksmith.jobs WHERE id = ?", id))
                    .isEqualTo("works");
            // the DSLContext the repositories use is a bean of its own type, never a second DSLContext
            assertThat(context.getBeanNamesForType(DSLContext.class)).hasSize(1);
        });
    }

    @Test
    void aBeanOfTheApplicationsOwnReplacesTheStartersOne() {
        runner().withUserConfiguration(OwnRepositories.class).run(context -> {
            assertThat(context).hasSingleBean(JobQueue.class).hasSingleBean(Accounts.class);
            assertThat(context.getBean(JobQueue.class)).isSameAs(context.getBean("myQueue"));
            assertThat(context.getBean(Accounts.class)).isSameAs(context.getBean("myAccounts"));
            assertThat(context).hasSingleBean(ChannelAccountPool.class);
        });
    }

    @Test
    void withoutADslContextTheStarterStaysOut() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(TestDatabases.dataSourceAutoConfiguration()))
                .withConfiguration(AutoConfigurations.of(TestDatabases.locksmithAutoConfigurations()))
                .withPropertyValues("spring.datasource.url=" + database.jdbcUrl())
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(JobQueue.class)
                        .doesNotHaveBean(LocksmithProperties.class)
                        .doesNotHaveBean(LocksmithWorkers.class)
                        .doesNotHaveBean("locksmithHealthIndicator"));
    }

    @Test
    void workersEnabledFalseRunsNoWorkerButKeepsTheRepositories() {
        runner().withUserConfiguration(Handlers.class)
                .withPropertyValues("locksmith.workers.enabled=false")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(LocksmithWorkers.class)
                        .hasSingleBean(JobQueue.class));
    }

    @Test
    void healthEnabledFalseRegistersNoIndicator() {
        runner().withPropertyValues("locksmith.health.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean("locksmithHealthIndicator");
            assertThat(context).hasSingleBean(JobQueue.class);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRepositories {
        @Bean
        JobQueue myQueue(DSLContext dsl) {
            return new JobQueue(dsl);
        }

        @Bean
        Accounts myAccounts(DSLContext dsl) {
            return new Accounts(dsl);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Handlers {
        @Bean
        @LocksmithHandler(queue = "emails")
        dev.locksmith.jobs.JobHandler emails() {
            return (job, tx) -> tx.select(DSL.one()).fetch();
        }
    }
}

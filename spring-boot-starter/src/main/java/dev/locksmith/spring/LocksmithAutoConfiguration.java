package dev.locksmith.spring;

import dev.locksmith.Locksmith;
import dev.locksmith.RetryPolicy;
import dev.locksmith.Transactions;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.advisory.AdvisoryLocks;
import dev.locksmith.audit.BlockingReport;
import dev.locksmith.audit.LockAudit;
import dev.locksmith.audit.LockAuditConfig;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.pool.ChannelAccountPoolConfig;
import dev.locksmith.schema.LocksmithSchema;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * locksmith on Spring Boot's {@code DataSource} and {@code DSLContext} (from
 * {@code spring-boot-starter-jooq}): the schema migrated at start-up
 * ({@link LocksmithSchemaMigration}, unless {@code locksmith.schema.migrate=false}), the
 * repositories as beans ({@code JobQueue}, {@code ChannelAccountPool}, {@code Accounts},
 * {@code AdvisoryLocks}, {@code LockAudit}, {@code BlockingReport}, {@code Transactions}), each
 * replaced by a bean of the same type you define, and the workers of the
 * {@link LocksmithHandler}s ({@link LocksmithWorkers}, unless
 * {@code locksmith.workers.enabled=false}).
 *
 * <p>The repositories are built from one {@link Locksmith} environment (a bean you may define
 * yourself) on Boot's {@code DSLContext}, whose connections come through Spring's
 * {@code TransactionAwareDataSourceProxy} and whose transactions are Spring's: a repository call
 * inside a {@code @Transactional} method (or a {@code TransactionTemplate}) commits or rolls back
 * with it. The environment's schema is {@code locksmith.schema.name}, its pooling and execution
 * modes {@code locksmith.pooling-mode} and {@code locksmith.execution-mode}, and every
 * {@code LocksmithObserver} bean observes it; an enqueue inside a Spring-managed transaction wakes
 * workers after that transaction commits. Settings beans are used when present:
 * {@code JobQueueConfig}, {@code ChannelAccountPoolConfig}, {@code LockAuditConfig} (else
 * {@code locksmith.audit.*}) and {@code RetryPolicy} (for {@code Accounts} and
 * {@code Transactions}). At start-up one INFO line names what of metrics, traces and health is
 * off for want of a library or a bean, and what turns it on.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
            "org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration",
            "org.springframework.boot.autoconfigure.jooq.JooqAutoConfiguration",
            "org.springframework.boot.autoconfigure.liquibase.LiquibaseAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
            "org.springframework.boot.jooq.autoconfigure.JooqAutoConfiguration",
            "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration"
        })
@ConditionalOnClass({DSLContext.class, JobQueue.class, LocksmithSchema.class})
@ConditionalOnSingleCandidate(DSLContext.class)
@EnableConfigurationProperties(LocksmithProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
public class LocksmithAutoConfiguration {

    LocksmithAutoConfiguration() {}

    @Bean
    @ConditionalOnProperty(prefix = "locksmith.schema", name = "migrate", havingValue = "true", matchIfMissing = true)
    LocksmithSchemaMigration locksmithSchemaMigration(DataSource dataSource, LocksmithProperties properties) {
        return new LocksmithSchemaMigration(dataSource, properties.schema());
    }

    @Bean
    LocksmithHandlers locksmithHandlers(ConfigurableListableBeanFactory beans, LocksmithProperties properties) {
        return LocksmithHandlers.scan(beans, properties);
    }

    @Bean
    @ConditionalOnMissingBean
    Locksmith locksmith(
            DSLContext dsl,
            LocksmithProperties properties,
            ObjectProvider<LocksmithObserver> observers,
            ObjectProvider<LocksmithSchemaMigration> migration,
            ConfigurableListableBeanFactory beans) {
        migration.ifAvailable(applied -> {}); // migrated before any repository exists
        Locksmith.Builder builder = Locksmith.builder(dsl)
                .schema(properties.schema().name())
                .poolingMode(properties.poolingMode())
                .executionMode(properties.executionMode())
                .observer(observers.orderedStream().toArray(LocksmithObserver[]::new));
        ClassLoader loader = getClass().getClassLoader();
        if (ClassUtils.isPresent(SpringCommitHook.SYNCHRONIZATION_MANAGER, loader)) {
            builder.commitHook(
                    ClassUtils.isPresent(SpringCommitHook.CONNECTION_HOLDER, loader)
                            ? SpringCommitHook.of(beans)
                            : new SpringCommitHook());
        }
        return builder.build();
    }

    @Bean
    @ConditionalOnMissingBean
    JobQueue jobQueue(Locksmith locksmith, ObjectProvider<JobQueueConfig> config) {
        return new JobQueue(locksmith, config.getIfAvailable(JobQueueConfig::defaults));
    }

    @Bean
    @ConditionalOnMissingBean
    ChannelAccountPool channelAccountPool(Locksmith locksmith, ObjectProvider<ChannelAccountPoolConfig> config) {
        return new ChannelAccountPool(locksmith, config.getIfAvailable(ChannelAccountPoolConfig::defaults));
    }

    @Bean
    @ConditionalOnMissingBean
    Accounts accounts(Locksmith locksmith, ObjectProvider<RetryPolicy> policy) {
        return new Accounts(locksmith, policy.getIfAvailable(RetryPolicy::defaults));
    }

    @Bean
    @ConditionalOnMissingBean
    AdvisoryLocks advisoryLocks(Locksmith locksmith) {
        return new AdvisoryLocks(locksmith);
    }

    @Bean
    @ConditionalOnMissingBean
    LockAudit lockAudit(Locksmith locksmith, LocksmithProperties properties, ObjectProvider<LockAuditConfig> config) {
        return new LockAudit(locksmith, config.getIfAvailable(() -> auditConfig(properties.audit())));
    }

    private static LockAuditConfig auditConfig(LocksmithProperties.Audit audit) {
        LockAuditConfig.Builder builder = LockAuditConfig.builder()
                .probeDelay(audit.probeDelay())
                .probeInterval(audit.probeInterval())
                .bufferSize(audit.bufferSize());
        if (audit.slowWaitThreshold() != null) {
            builder.slowWaitThreshold(audit.slowWaitThreshold());
        }
        return builder.build();
    }

    @Bean
    @ConditionalOnMissingBean
    BlockingReport blockingReport(Locksmith locksmith) {
        return new BlockingReport(locksmith);
    }

    @Bean
    @ConditionalOnMissingBean
    Transactions transactions(Locksmith locksmith, ObjectProvider<RetryPolicy> policy) {
        return new Transactions(locksmith, policy.getIfAvailable(RetryPolicy::defaults));
    }

    /** One INFO line at start-up naming what of metrics, traces and health is off, and what turns it on. */
    @Bean
    static LocksmithObservabilityReport locksmithObservabilityReport(
            ConfigurableListableBeanFactory beans, Environment environment) {
        return new LocksmithObservabilityReport(beans, environment);
    }

    @Bean
    @ConditionalOnProperty(prefix = "locksmith.workers", name = "enabled", havingValue = "true", matchIfMissing = true)
    @ConditionalOnMissingBean
    LocksmithWorkers locksmithWorkers(
            ConfigurableListableBeanFactory beans,
            LocksmithHandlers handlers,
            LocksmithProperties properties,
            DataSource dataSource,
            JobQueue queue,
            Environment environment) {
        // Spring Boot's switch for virtual threads; they came in Java 21
        boolean virtual = environment.getProperty("spring.threads.virtual.enabled", Boolean.class, false)
                && Runtime.version().feature() >= 21;
        return new LocksmithWorkers(beans, handlers, properties, dataSource, queue, virtual);
    }
}

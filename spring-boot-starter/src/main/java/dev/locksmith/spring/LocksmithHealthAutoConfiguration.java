package dev.locksmith.spring;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.schema.SchemaModule;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The {@link LocksmithHealthIndicator} (health contributor {@code locksmith}), with Spring Boot
 * Actuator (Spring Boot 3's health API) on the class path, unless
 * {@code locksmith.health.enabled=false} or a bean named {@code locksmithHealthIndicator} exists.
 */
@AutoConfiguration(after = LocksmithAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.health.AbstractHealthIndicator")
@ConditionalOnBean(Locksmith.class)
@ConditionalOnProperty(prefix = "locksmith.health", name = "enabled", havingValue = "true", matchIfMissing = true)
public class LocksmithHealthAutoConfiguration {

    LocksmithHealthAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean(name = "locksmithHealthIndicator")
    LocksmithHealthIndicator locksmithHealthIndicator(
            Locksmith locksmith,
            LocksmithProperties properties,
            LocksmithHandlers handlers,
            ObjectProvider<JobQueue> queue,
            ObjectProvider<ChannelAccountPool> pool) {
        Set<SchemaModule> modules = properties.schema().modules();
        Set<String> queues = new TreeSet<>(handlers.byQueue().keySet());
        queues.addAll(properties.queues().keySet());
        return new LocksmithHealthIndicator(
                locksmith.dsl(),
                modules.contains(SchemaModule.QUEUE) ? queue.getIfAvailable() : null,
                queues,
                modules.contains(SchemaModule.POOL) ? pool.getIfAvailable() : null,
                properties.health());
    }
}

package dev.locksmith.spring;

import dev.locksmith.Locksmith;
import dev.locksmith.audit.HorizonReport;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.micrometer.HorizonMetrics;
import dev.locksmith.micrometer.LocksmithMetrics;
import dev.locksmith.micrometer.PoolMetrics;
import dev.locksmith.micrometer.QueueDepthMetrics;
import dev.locksmith.pool.ChannelAccountPool;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Metrics, with {@code locksmith-micrometer} on the class path and a {@code MeterRegistry} bean:
 * a {@link LocksmithMetrics} bean (a {@code LocksmithObserver}, so the repositories and workers
 * report to it), a {@link QueueDepthMetrics} for the queues of the {@link LocksmithHandler}s and of
 * {@code locksmith.queues} (when there is one; with gauges per key when
 * {@code locksmith.metrics.limit-keys-per-queue} is set), and a {@link PoolMetrics} when the {@code pool} module is in
 * {@code locksmith.schema.modules} (and likewise the queue gauges need the {@code queue} module), and a
 * {@link HorizonMetrics} (what holds the MVCC horizon back). Each is bound to the registry once every bean is created (the
 * primary one when there are several, as Spring Boot binds its own {@code MeterBinder}s), and is
 * replaced by a bean of the same type you define.
 */
@AutoConfiguration(
        after = LocksmithAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"
        })
@ConditionalOnClass({LocksmithMetrics.class, MeterRegistry.class})
@ConditionalOnBean({MeterRegistry.class, Locksmith.class})
public class LocksmithMetricsAutoConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(LocksmithMetricsAutoConfiguration.class);

    LocksmithMetricsAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    LocksmithMetrics locksmithMetrics() {
        return new LocksmithMetrics();
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(JobQueue.class)
    @Conditional(QueuesCondition.class)
    QueueDepthMetrics locksmithQueueDepthMetrics(
            JobQueue queue, LocksmithHandlers handlers, LocksmithProperties properties) {
        java.util.Set<String> queues =
                new java.util.TreeSet<>(handlers.byQueue().keySet());
        queues.addAll(properties.queues().keySet());
        return QueueDepthMetrics.builder(queue, queues)
                .keysPerQueue(properties.metrics().limitKeysPerQueue())
                .build();
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(ChannelAccountPool.class)
    @Conditional(SchemaModuleCondition.Pool.class)
    PoolMetrics locksmithPoolMetrics(ChannelAccountPool pool) {
        return PoolMetrics.builder(pool).build();
    }

    @Bean
    @ConditionalOnMissingBean
    HorizonMetrics locksmithHorizonMetrics(Locksmith locksmith) {
        return HorizonMetrics.builder(new HorizonReport(locksmith)).build();
    }

    @Bean
    static SmartInitializingSingleton locksmithMeterBinding(
            ObjectProvider<MeterRegistry> registry,
            ObjectProvider<LocksmithMetrics> metrics,
            ObjectProvider<QueueDepthMetrics> depth,
            ObjectProvider<PoolMetrics> pool,
            ObjectProvider<HorizonMetrics> horizon) {
        return () -> {
            MeterRegistry target = registry.getIfUnique();
            if (target == null) {
                LOG.warn("several MeterRegistry beans and none primary: locksmith's meters are not bound");
                return;
            }
            List<MeterBinder> binders = new java.util.ArrayList<>();
            metrics.ifAvailable(binders::add);
            depth.ifAvailable(binders::add);
            pool.ifAvailable(binders::add);
            horizon.ifAvailable(binders::add);
            for (MeterBinder binder : binders) {
                try {
                    binder.bindTo(target);
                } catch (IllegalStateException e) {
                    LOG.warn("{} was bound to another registry already; not bound to {}", binder, target, e);
                }
            }
        };
    }
}

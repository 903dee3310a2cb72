package dev.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.micrometer.LocksmithMetrics;
import dev.locksmith.micrometer.PoolMetrics;
import dev.locksmith.micrometer.QueueDepthMetrics;
import dev.locksmith.opentelemetry.LocksmithTracing;
import dev.locksmith.provisioning.ScratchDatabase;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Metrics and traces are configured exactly when their libraries and beans are there, and observe the repositories together. */
class ObserversTest {

    private static ScratchDatabase database;

    @BeforeAll
    static void database() {
        database = TestDatabases.migrated("observers");
    }

    private static ApplicationContextRunner runner() {
        return TestDatabases.runner(database)
                .withPropertyValues("locksmith.schema.migrate=false", "locksmith.workers.enabled=false");
    }

    @Test
    void metricsAndTracingTogetherObserveTheRepositories() {
        runner().withUserConfiguration(Registry.class, Telemetry.class)
                .withPropertyValues("locksmith.queues.observed.threads=1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context)
                            .hasSingleBean(LocksmithMetrics.class)
                            .hasSingleBean(QueueDepthMetrics.class)
                            .hasSingleBean(PoolMetrics.class)
                            .hasSingleBean(LocksmithTracing.class);
                    assertThat(context.getBean(QueueDepthMetrics.class).queues())
                            .containsExactly("observed");
                    assertThat(context.getBean(QueueDepthMetrics.class).keysPerQueue())
                            .isZero(); // no gauge per key unless asked for
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    DSLContext dsl = context.getBean(DSLContext.class);
                    OpenTelemetry otel = context.getBean(OpenTelemetry.class);

                    Span span = otel.getTracer("test").spanBuilder("request").startSpan();
                    long id;
                    try (Scope ignored = span.makeCurrent()) {
                        id = context.getBean(JobQueue.class).enqueue(dsl, NewJob.of("observed", "traced"));
                    } finally {
                        span.end();
                    }
                    // the metrics observer counted it, and the tracing observer stored the caller's trace
                    assertThat(registry.get("locksmith.jobs.inserted")
                                    .tags("queue", "observed", "kind", "traced")
                                    .counter()
                                    .count())
                            .isEqualTo(1.0);
                    // The span's own flags: sampled (01) here, plus W3C's random-trace-id bit (03) where
                    // the SDK sets it (the OpenTelemetry SDK that Spring Boot 4.1 manages does).
                    assertThat(dsl.fetchValue("SELECT traceparent FROM locksmith.jobs WHERE id = ?", id))
                            .isEqualTo("00-" + span.getSpanContext().getTraceId() + "-"
                                    + span.getSpanContext().getSpanId() + "-"
                                    + span.getSpanContext().getTraceFlags().asHex());
                    // the gauges are bound too
                    assertThat(registry.get("locksmith.jobs.depth")
                                    .tags("queue", "observed", "status", "pending")
                                    .gauge())
                            .isNotNull();
                    assertThat(registry.get("locksmith.pool.accounts")
                                    .tags("status", "idle")
                                    .gauge())
                            .isNotNull();
                });
    }

    @Test
    void limitKeysPerQueueTurnsOnTheGaugesPerKey() {
        runner().withUserConfiguration(Registry.class)
                .withPropertyValues("locksmith.queues.observed.threads=1", "locksmith.metrics.limit-keys-per-queue=5")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(QueueDepthMetrics.class).keysPerQueue())
                            .isEqualTo(5);
                });
    }

    @Test
    void withoutTheirBeansThereAreNoObservers() {
        runner().run(context -> assertThat(context)
                .hasNotFailed()
                .doesNotHaveBean(LocksmithMetrics.class)
                .doesNotHaveBean(QueueDepthMetrics.class)
                .doesNotHaveBean(LocksmithTracing.class));
    }

    @Test
    void withoutTheirLibrariesThereAreNoObserversEvenWithTheBeans() {
        runner().withUserConfiguration(Registry.class, Telemetry.class)
                .withClassLoader(new FilteredClassLoader(LocksmithMetrics.class, LocksmithTracing.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(LocksmithMetrics.class)
                        .doesNotHaveBean(LocksmithTracing.class)
                        .hasSingleBean(JobQueue.class));
    }

    @Test
    void withoutThePoolModuleThereAreNoPoolGaugesAndWithoutQueuesNoQueueGauges() {
        runner().withUserConfiguration(Registry.class)
                .withPropertyValues("locksmith.schema.modules=queue,audit")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .hasSingleBean(LocksmithMetrics.class)
                        .doesNotHaveBean(QueueDepthMetrics.class)
                        .doesNotHaveBean(PoolMetrics.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class Registry {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Telemetry {
        @Bean(destroyMethod = "close")
        OpenTelemetrySdk openTelemetry() {
            return OpenTelemetrySdk.builder()
                    .setTracerProvider(SdkTracerProvider.builder().build())
                    .build();
        }
    }
}

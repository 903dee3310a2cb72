package dev.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.locksmith.micrometer.LocksmithMetrics;
import dev.locksmith.opentelemetry.LocksmithTracing;
import dev.locksmith.provisioning.ScratchDatabase;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

/**
 * An application that adds only the starter learns at start-up, in one INFO line, which of
 * metrics, traces and health are off and what turns each on; nothing is said of what is on.
 */
class ObservabilityReportTest {

    private static ScratchDatabase database;

    @BeforeAll
    static void database() {
        database = TestDatabases.migrated("observability_report");
    }

    private static ApplicationContextRunner runner() {
        return TestDatabases.runner(database)
                .withPropertyValues("locksmith.schema.migrate=false", "locksmith.workers.enabled=false");
    }

    /** The report's INFO records while a context starts and stops. */
    private static List<ILoggingEvent> reported(ApplicationContextRunner runner) {
        Logger logger = (Logger) LoggerFactory.getLogger(LocksmithObservabilityReport.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            runner.run(context -> assertThat(context).hasNotFailed());
        } finally {
            logger.detachAppender(appender);
        }
        synchronized (appender) {
            return appender.list.stream()
                    .filter(e -> e.getLevel() == Level.INFO)
                    .toList();
        }
    }

    @Test
    void withTheLibrariesButNeitherBeanOneLineSaysMetricsAndTracesAreOffAndWhatTurnsThemOn() {
        assertThat(reported(runner()))
                .singleElement()
                .satisfies(
                        e -> assertThat(e.getFormattedMessage())
                                .startsWith("locksmith: ")
                                .contains(
                                        "metrics off: no MeterRegistry bean (add spring-boot-starter-actuator",
                                        "traces off: no OpenTelemetry bean (Spring Boot 4: add spring-boot-starter-opentelemetry"));
    }

    @Test
    void withoutTheLibrariesTheLineNamesTheArtifacts() {
        assertThat(reported(runner().withUserConfiguration(Registry.class, Telemetry.class)
                        .withClassLoader(new FilteredClassLoader(LocksmithMetrics.class, LocksmithTracing.class))))
                .singleElement()
                .satisfies(e -> assertThat(e.getFormattedMessage())
                        .contains(
                                "metrics off: add dev.locksmith:locksmith-micrometer",
                                "traces off: add dev.locksmith:locksmith-opentelemetry"));
    }

    @Test
    void withEverythingOnNothingIsSaid() {
        List<ILoggingEvent> reported = reported(runner().withUserConfiguration(Registry.class, Telemetry.class));
        assertThat(reported)
                .noneSatisfy(e -> assertThat(e.getFormattedMessage()).contains("metrics off"))
                .noneSatisfy(e -> assertThat(e.getFormattedMessage()).contains("traces off"));
        if (ClassUtils.isPresent(
                LocksmithObservabilityReport.BOOT3_HEALTH, getClass().getClassLoader())) {
            assertThat(reported).isEmpty(); // Spring Boot 3: the health indicator is on too
        }
    }

    @Test
    void healthTurnedOffByTheApplicationIsNotReported() {
        assertThat(reported(runner().withUserConfiguration(Registry.class, Telemetry.class)
                        .withPropertyValues("locksmith.health.enabled=false")))
                .isEmpty();
    }

    @Test
    void onSpringBoot4TheHealthPartSaysTheIndicatorIsForSpringBoot3WithOrWithoutActuator() {
        assertThat(LocksmithObservabilityReport.healthOff(false, true)).contains("Spring Boot 4 moved");
        assertThat(LocksmithObservabilityReport.healthOff(false, false))
                .isEqualTo("health off: add spring-boot-starter-actuator");
        assertThat(LocksmithObservabilityReport.healthOff(true, false)).contains("did not apply");
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

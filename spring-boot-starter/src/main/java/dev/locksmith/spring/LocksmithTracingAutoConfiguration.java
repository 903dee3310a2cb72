package dev.locksmith.spring;

import dev.locksmith.Locksmith;
import dev.locksmith.opentelemetry.LocksmithTracing;
import io.opentelemetry.api.OpenTelemetry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Traces, with {@code locksmith-opentelemetry} on the class path and an {@code OpenTelemetry}
 * bean (Spring Boot's, or yours): a {@link LocksmithTracing} bean, a {@code LocksmithObserver}, so
 * the repositories and workers make spans and carry the enqueuing trace to the handler. Replaced
 * by a {@code LocksmithTracing} bean you define.
 */
@AutoConfiguration(
        after = LocksmithAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.actuate.autoconfigure.opentelemetry.OpenTelemetryAutoConfiguration",
            "org.springframework.boot.opentelemetry.autoconfigure.OpenTelemetrySdkAutoConfiguration"
        })
@ConditionalOnClass({LocksmithTracing.class, OpenTelemetry.class})
@ConditionalOnBean({OpenTelemetry.class, Locksmith.class})
public class LocksmithTracingAutoConfiguration {

    LocksmithTracingAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    LocksmithTracing locksmithTracing(OpenTelemetry openTelemetry) {
        return LocksmithTracing.create(openTelemetry);
    }
}

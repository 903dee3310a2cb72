package dev.locksmith.spring;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.SpringBootVersion;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Says at start-up, in one INFO line, which of the starter's metrics, traces and health indicator
 * are off and what turns each on, once every bean exists: each is conditional on a library and a
 * bean the application may not have, and an application that lacks one would otherwise get
 * nothing and no word. Silent when all three are on, or off by the application's own choice
 * ({@code locksmith.health.enabled=false}).
 *
 * <p>Classes are looked up by name in the context's class loader: the libraries are optional.
 */
final class LocksmithObservabilityReport implements SmartInitializingSingleton {

    private static final Logger LOG = LoggerFactory.getLogger(LocksmithObservabilityReport.class);

    static final String METRICS = "dev.locksmith.micrometer.LocksmithMetrics";
    static final String TRACING = "dev.locksmith.opentelemetry.LocksmithTracing";
    static final String BOOT3_HEALTH = "org.springframework.boot.actuate.health.AbstractHealthIndicator";
    static final String BOOT4_HEALTH = "org.springframework.boot.health.contributor.HealthIndicator";
    /** The health indicator's bean name: the starter's, or the application's own in its place. */
    static final String HEALTH_BEAN = "locksmithHealthIndicator";

    private final ConfigurableListableBeanFactory beans;
    private final Environment environment;

    LocksmithObservabilityReport(ConfigurableListableBeanFactory beans, Environment environment) {
        this.beans = beans;
        this.environment = environment;
    }

    @Override
    public void afterSingletonsInstantiated() {
        List<String> off = off();
        if (!off.isEmpty()) {
            LOG.info("locksmith: {}", String.join("; ", off));
        }
    }

    /** What is off and why, one entry for each of metrics, traces and health. */
    List<String> off() {
        List<String> off = new ArrayList<>();
        if (!hasBean(METRICS)) {
            off.add(
                    present(METRICS)
                            ? "metrics off: no MeterRegistry bean (add spring-boot-starter-actuator, or define one)"
                            : "metrics off: add dev.locksmith:locksmith-micrometer (with a MeterRegistry:"
                                    + " spring-boot-starter-actuator)");
        }
        if (!hasBean(TRACING)) {
            off.add(
                    present(TRACING)
                            ? "traces off: no OpenTelemetry bean (Spring Boot 4: add spring-boot-starter-opentelemetry;"
                                    + " 3.5: Actuator with the OpenTelemetry SDK, e.g. micrometer-tracing-bridge-otel;"
                                    + " or define one)"
                            : "traces off: add dev.locksmith:locksmith-opentelemetry (with an OpenTelemetry bean)");
        }
        boolean healthWanted = environment.getProperty("locksmith.health.enabled", Boolean.class, Boolean.TRUE);
        if (healthWanted && !beans.containsBean(HEALTH_BEAN)) {
            off.add(healthOff(present(BOOT3_HEALTH), present(BOOT4_HEALTH) || springBootMajor() >= 4));
        }
        return off;
    }

    /**
     * Why the health indicator is off: Spring Boot 3's health API is there (then the
     * auto-configuration did not apply), or this is Spring Boot 4, whose health API moved, or
     * Actuator is missing.
     */
    static String healthOff(boolean boot3HealthApi, boolean springBoot4) {
        if (boot3HealthApi) {
            return "health off: LocksmithHealthAutoConfiguration did not apply";
        }
        if (springBoot4) {
            return "health off: the locksmith health indicator is built on Spring Boot 3's Actuator API,"
                    + " which Spring Boot 4 moved to spring-boot-health";
        }
        return "health off: add spring-boot-starter-actuator";
    }

    /** The running Spring Boot's major version, 0 when its jar does not say. */
    private static int springBootMajor() {
        String version = SpringBootVersion.getVersion();
        if (version == null) {
            return 0;
        }
        int dot = version.indexOf('.');
        try {
            return Integer.parseInt(dot < 0 ? version : version.substring(0, dot));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private boolean hasBean(String className) {
        Class<?> type = load(className);
        return type != null && beans.getBeanNamesForType(type).length > 0;
    }

    private boolean present(String className) {
        return load(className) != null;
    }

    private @Nullable Class<?> load(String className) {
        ClassLoader loader = beans.getBeanClassLoader();
        return ClassUtils.isPresent(className, loader) ? ClassUtils.resolveClassName(className, loader) : null;
    }
}

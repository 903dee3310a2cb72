package dev.locksmith.spring;

import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import dev.locksmith.schema.LocksmithSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * One PostgreSQL per test JVM, found the project's way (explicit URL, Testcontainers, embedded),
 * and a scratch database per use: empty, or a copy of a template migrated once. Every database is
 * dropped when the JVM exits.
 */
final class TestDatabases {

    private static ScratchDatabases databases;
    private static ScratchDatabase template;

    private TestDatabases() {}

    private static synchronized ScratchDatabases databases() {
        if (databases == null) {
            PostgresServer server = PostgresServer.start();
            databases = server.scratch("locksmith_boot");
        }
        return databases;
    }

    /** A new database with every locksmith module migrated into schema {@code locksmith}. */
    static synchronized ScratchDatabase migrated(String purpose) {
        if (template == null) {
            template = databases().create("template");
            LocksmithSchema.migrate(template.dataSource());
        }
        return databases().create(purpose, template);
    }

    /** A new, empty database. */
    static synchronized ScratchDatabase empty(String purpose) {
        return databases().create(purpose);
    }

    /**
     * Spring Boot's auto-configuration of a {@code DataSource} (and nothing else): by name, since
     * Spring Boot 4 moved it (these tests also run against Spring Boot 4, see the
     * {@code spring-boot-4} profile).
     */
    static Class<?> dataSourceAutoConfiguration() {
        return bootClass(
                "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
                "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration");
    }

    /** Spring Boot's DataSource, transaction and jOOQ auto-configuration, wherever this Spring Boot keeps them. */
    static Class<?>[] bootAutoConfigurations() {
        return new Class<?>[] {
            dataSourceAutoConfiguration(),
            bootClass(
                    "org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration",
                    "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration"),
            bootClass(
                    "org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration",
                    "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration"),
            bootClass(
                    "org.springframework.boot.autoconfigure.jooq.JooqAutoConfiguration",
                    "org.springframework.boot.jooq.autoconfigure.JooqAutoConfiguration")
        };
    }

    /** The starter's auto-configurations. */
    static Class<?>[] locksmithAutoConfigurations() {
        return new Class<?>[] {
            LocksmithAutoConfiguration.class,
            LocksmithMetricsAutoConfiguration.class,
            LocksmithTracingAutoConfiguration.class,
            LocksmithHealthAutoConfiguration.class
        };
    }

    private static Class<?> bootClass(String springBoot3, String springBoot4) {
        for (String name : List.of(springBoot3, springBoot4)) {
            try {
                return Class.forName(name, false, TestDatabases.class.getClassLoader());
            } catch (ClassNotFoundException notThisVersion) {
                // the other one
            }
        }
        throw new IllegalStateException("neither " + springBoot3 + " nor " + springBoot4 + " is on the class path");
    }

    /**
     * A runner with Spring Boot's DataSource, transaction and jOOQ auto-configuration on
     * {@code database}, and the starter's.
     */
    static ApplicationContextRunner runner(ScratchDatabase database) {
        List<String> properties = new ArrayList<>(List.of(
                "spring.datasource.url=" + database.jdbcUrl(),
                "spring.datasource.username=" + database.user(),
                "spring.datasource.hikari.maximum-pool-size=12",
                "spring.datasource.hikari.minimum-idle=0"));
        if (database.password() != null) {
            properties.add("spring.datasource.password=" + database.password());
        }
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        Stream.concat(Stream.of(bootAutoConfigurations()), Stream.of(locksmithAutoConfigurations()))
                                .toArray(Class<?>[]::new)))
                .withPropertyValues(properties.toArray(String[]::new));
    }
}

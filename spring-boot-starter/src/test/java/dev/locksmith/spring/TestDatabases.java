package dev.locksmith.spring;

import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import dev.locksmith.schema.LocksmithSchema;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.autoconfigure.jooq.JooqAutoConfiguration;
import org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration;
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
                        DataSourceAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class,
                        TransactionAutoConfiguration.class,
                        JooqAutoConfiguration.class,
                        LocksmithAutoConfiguration.class,
                        LocksmithMetricsAutoConfiguration.class,
                        LocksmithTracingAutoConfiguration.class,
                        LocksmithHealthAutoConfiguration.class))
                .withPropertyValues(properties.toArray(String[]::new));
    }
}

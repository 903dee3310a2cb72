package com.example.orders;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * The database when {@code spring.datasource.url} is not set: a PostgreSQL found the way
 * locksmith's own tests find one ({@code LOCKSMITH_JDBC_URL}, else Testcontainers, else embedded
 * PostgreSQL 17), and on it a database created for this run. At shutdown the database is dropped
 * and a server this process started is stopped (after the data source is closed, which depends
 * on it). Set {@code spring.datasource.url} (with {@code username} and {@code password}) to keep
 * your data in a database of your own: then this configuration is off and Spring Boot builds the
 * data source as usual.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(ProvisionedDatabase.NoDataSourceUrl.class)
class ProvisionedDatabase {

    private static final Logger LOG = LoggerFactory.getLogger(ProvisionedDatabase.class);

    @Bean(destroyMethod = "close")
    PostgresServer postgresServer() {
        return PostgresServer.start();
    }

    /** Spring Boot's pool on the new database; {@code spring.datasource.hikari.*} applies. */
    @Bean
    @ConfigurationProperties("spring.datasource.hikari")
    HikariDataSource dataSource(PostgresServer server) {
        ScratchDatabase database = server.scratch("locksmith_example").create("orders");
        String url = database.jdbcUrl();
        LOG.info(
                "orders database: {} as {} (dropped at shutdown; set spring.datasource.url to keep the data)",
                url.contains("?") ? url.substring(0, url.indexOf('?')) : url,
                database.user());
        return DataSourceBuilder.create()
                .type(HikariDataSource.class)
                .url(database.jdbcUrl())
                .username(database.user())
                .password(database.password())
                .build();
    }

    /** Matches when no {@code spring.datasource.url} is set. */
    static final class NoDataSourceUrl implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return !StringUtils.hasText(context.getEnvironment().getProperty("spring.datasource.url"));
        }
    }
}

package dev.locksmith.it.support;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import dev.locksmith.schema.LocksmithSchema;

/**
 * One PostgreSQL per test JVM, obtained the shared way (explicit URL, Testcontainers,
 * embedded). Test classes get their own database, copied from a template migrated once; every
 * database is dropped when its class ends, and whatever is left when the JVM exits.
 */
public final class TestPostgres {

    private static PostgresServer server;
    private static ScratchDatabases databases;
    private static ScratchDatabase template;

    private TestPostgres() {}

    /** The shared server, started on first use. */
    public static synchronized PostgresServer server() {
        if (server == null) {
            server = PostgresServer.start();
            databases = server.scratch("locksmith_it");
        }
        return server;
    }

    /** A new database with the locksmith schema applied. */
    public static synchronized ScratchDatabase freshMigrated(String purpose) {
        server();
        if (template == null) {
            template = databases.create("template");
            LocksmithSchema.migrate(template.dataSource());
        }
        return databases.create(purpose, template);
    }

    /** A new, empty database. */
    public static synchronized ScratchDatabase freshEmpty(String purpose) {
        server();
        return databases.create(purpose);
    }

    /** Drops {@code database} now. */
    public static synchronized void drop(ScratchDatabase database) {
        databases.drop(database);
    }

    /** A HikariCP pool of up to {@code size} connections to {@code database}. */
    public static HikariDataSource pool(ScratchDatabase database, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database.jdbcUrl());
        config.setUsername(database.user());
        config.setPassword(database.password());
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setPoolName("it-" + database.name());
        return new HikariDataSource(config);
    }
}

package dev.locksmith.dashboard;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import dev.locksmith.schema.LocksmithSchema;
import dev.locksmith.schema.SchemaModule;
import java.util.EnumSet;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * One PostgreSQL per test JVM, found the shared way (explicit URL, Testcontainers, embedded); a
 * migrated scratch database per test class, dropped when the class closes it.
 */
final class TestDatabase implements AutoCloseable {

    private static PostgresServer server;
    private static ScratchDatabases databases;

    final ScratchDatabase database;
    final HikariDataSource pool;
    final DSLContext dsl;

    private TestDatabase(ScratchDatabase database, int poolSize) {
        this.database = database;
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database.jdbcUrl());
        config.setUsername(database.user());
        config.setPassword(database.password());
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(0);
        config.setPoolName("dashboard-" + database.name());
        this.pool = new HikariDataSource(config);
        this.dsl = DSL.using(pool, SQLDialect.POSTGRES);
    }

    /** A new database with every schema module applied in {@code schema}. */
    static synchronized TestDatabase migrated(String purpose, String schema, int poolSize) {
        if (server == null) {
            server = PostgresServer.start();
            databases = server.scratch("locksmith_dashboard");
        }
        ScratchDatabase database = databases.create(purpose);
        LocksmithSchema.migrate(database.dataSource(), schema, EnumSet.allOf(SchemaModule.class));
        return new TestDatabase(database, poolSize);
    }

    @Override
    public void close() {
        pool.close();
        synchronized (TestDatabase.class) {
            databases.drop(database);
        }
    }
}

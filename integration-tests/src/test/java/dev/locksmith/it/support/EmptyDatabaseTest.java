package dev.locksmith.it.support;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.provisioning.ScratchDatabase;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A test that starts every method on an empty database of its own (no locksmith schema: the test
 * migrates what it needs), with a connection pool and a {@code DSLContext} on it; dropped after.
 */
public abstract class EmptyDatabaseTest {

    protected ScratchDatabase database;
    protected HikariDataSource pool;
    protected DSLContext dsl;

    /** {@return the prefix of the database's name} */
    protected abstract String databaseName();

    /** {@return the pool's size} */
    protected int poolSize() {
        return 8;
    }

    @BeforeEach
    void emptyDatabase() {
        database = TestPostgres.freshEmpty(databaseName());
        pool = TestPostgres.pool(database, poolSize());
        dsl = DSL.using(pool, SQLDialect.POSTGRES);
    }

    @AfterEach
    void dropDatabase() {
        pool.close();
        TestPostgres.drop(database);
    }
}

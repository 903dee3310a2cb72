package dev.locksmith.it.support;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.provisioning.ScratchDatabase;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** A test class with its own migrated database and a pool of real connections to it. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class DatabaseTest {

    protected ScratchDatabase database;
    protected HikariDataSource pool;
    protected DSLContext dsl;

    /** Pool size; concurrency tests need one connection per thread plus a few. */
    protected int poolSize() {
        return 24;
    }

    @BeforeAll
    void createDatabase() {
        database = TestPostgres.freshMigrated(getClass().getSimpleName());
        pool = TestPostgres.pool(database, poolSize());
        dsl = DSL.using(pool, SQLDialect.POSTGRES);
    }

    @AfterAll
    void dropDatabase() {
        if (pool != null) {
            pool.close();
        }
        if (database != null) {
            TestPostgres.drop(database);
        }
    }
}

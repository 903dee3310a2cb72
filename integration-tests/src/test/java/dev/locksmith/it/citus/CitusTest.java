package dev.locksmith.it.citus;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.schema.LocksmithSchema;
import dev.locksmith.schema.SchemaModule;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A test class against a real Citus cluster: the coordinator named by
 * {@code LOCKSMITH_CITUS_URL} (user {@code LOCKSMITH_CITUS_USER}, else postgres). Skipped
 * without it; {@code .ci/run} starts a local cluster ({@code ../shared/citus}) and runs these as
 * its Citus pass. Citus's extension lives in the coordinator's database, so each class gets its
 * own schema there rather than its own database (distributed tables and all), dropped when the
 * class ends.
 */
@Tag("citus")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CitusTest {

    static final String URL = System.getenv("LOCKSMITH_CITUS_URL");

    protected String schema;
    protected HikariDataSource pool;
    /** On the class's schema ({@code Locksmith.Builder#schema}). */
    protected DSLContext dsl;

    protected int poolSize() {
        return 40;
    }

    @BeforeAll
    void createSchema() {
        Assumptions.assumeTrue(URL != null && !URL.isBlank(), "LOCKSMITH_CITUS_URL is not set");
        schema = "it_" + getClass().getSimpleName().toLowerCase(Locale.ROOT) + "_"
                + UUID.randomUUID().toString().substring(0, 8);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(URL);
        String user = System.getenv("LOCKSMITH_CITUS_USER");
        config.setUsername(user == null ? "postgres" : user);
        config.setPassword(System.getenv("LOCKSMITH_CITUS_PASSWORD"));
        config.setMaximumPoolSize(poolSize());
        config.setMinimumIdle(0);
        config.setPoolName("citus-" + schema);
        pool = new HikariDataSource(config);
        migrate(schema, EnumSet.allOf(SchemaModule.class));
        dsl = Locksmith.builder(DSL.using(pool, SQLDialect.POSTGRES))
                .schema(schema)
                .build()
                .dsl();
    }

    /**
     * Applies the locksmith schema to {@code target}, with Liquibase's own tables in it too:
     * Liquibase keeps them in the connection's default schema, and several locksmith schemas in
     * one database need one each.
     */
    protected void migrate(String target, Set<SchemaModule> modules) {
        DSL.using(pool, SQLDialect.POSTGRES).execute("CREATE SCHEMA IF NOT EXISTS {0}", DSL.name(target));
        LocksmithSchema.migrate(migrator(target), target, modules);
    }

    /** Connections for Liquibase on {@code target}, whose own tables live there too (see {@link #migrate}). */
    protected PGSimpleDataSource migrator(String target) {
        PGSimpleDataSource migrator = new PGSimpleDataSource();
        migrator.setUrl(URL);
        migrator.setUser(pool.getUsername());
        migrator.setPassword(pool.getPassword());
        migrator.setCurrentSchema(target);
        return migrator;
    }

    @AfterAll
    void dropSchema() {
        if (pool != null) {
            DSL.using(pool, SQLDialect.POSTGRES).execute("DROP SCHEMA {0} CASCADE", DSL.name(schema));
            pool.close();
        }
    }

    /** The number of shards Citus split the class's jobs table into. */
    protected int jobShards() {
        return shardsOf("jobs");
    }

    /** The number of shards Citus split the class's {@code table} into. */
    protected int shardsOf(String table) {
        return ((Number) DSL.using(pool, SQLDialect.POSTGRES)
                        .fetchValue(
                                "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = to_regclass({0})",
                                DSL.val(schema + "." + table)))
                .intValue();
    }

    /**
     * A {@code DSLContext} on the class's schema that adds each statement it runs, with its bind
     * values inlined, to {@code statements}.
     */
    protected DSLContext recording(java.util.List<String> statements) {
        org.jooq.ExecuteListener recorder = new org.jooq.ExecuteListener() {
            @Override
            public void executeStart(org.jooq.ExecuteContext ctx) {
                if (ctx.query() != null) {
                    statements.add(ctx.dsl().renderInlined(ctx.query()));
                }
            }
        };
        return Locksmith.builder(DSL.using(pool, SQLDialect.POSTGRES)
                        .configuration()
                        .derive(recorder)
                        .dsl())
                .schema(schema)
                .build()
                .dsl();
    }

    /** The plan of {@code sql} (values inlined), explained in a transaction that is rolled back. */
    protected String explain(String sql) throws java.sql.SQLException {
        try (java.sql.Connection c = pool.getConnection();
                java.sql.Statement explain = c.createStatement()) {
            c.setAutoCommit(false);
            try {
                StringBuilder plan = new StringBuilder();
                try (java.sql.ResultSet rows = explain.executeQuery("EXPLAIN " + sql)) {
                    while (rows.next()) {
                        plan.append(rows.getString(1)).append('\n');
                    }
                }
                return plan.toString();
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
    }
}

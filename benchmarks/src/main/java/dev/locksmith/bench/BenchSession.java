package dev.locksmith.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ServerSettings;
import dev.locksmith.schema.AppliedChangeSet;
import dev.locksmith.schema.LocksmithSchema;
import dev.locksmith.schema.SchemaModule;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;

/**
 * A PostgreSQL obtained the shared way, a migrated scratch database on it, and a HikariCP pool;
 * closing drops the database (and stops a server this process started).
 */
public final class BenchSession implements AutoCloseable {

    private final PostgresServer server;
    private final ScratchDatabase database;
    private final List<AppliedChangeSet> applied;
    private final HikariDataSource pool;
    /**
     * Connections this process and pgbench may hold at once: the server's slots for ordinary
     * roles less those taken when the session began and a few for the bench's own checks.
     */
    private final int connectionBudget;

    private final DSLContext dsl;
    private final java.util.Optional<PgBench> pgbench;

    /**
     * Obtains the server (one this process starts commits durably, as a production server does:
     * {@link PostgresServer#startDurable}), creates a scratch database, migrates it into {@code schema}, and opens a
     * pool of {@code poolSize} whose sessions find the tables by {@code search_path} (the raw JDBC
     * baselines write table names unqualified) and whose {@code DSLContext} maps the schema.
     */
    public BenchSession(ServerSettings settings, int poolSize, String schema) {
        this(settings, poolSize, schema, Map.of());
    }

    /**
     * {@link #BenchSession(ServerSettings, int, String)}, a server this process starts running
     * with {@code serverConfig} too ({@link PostgresServer#startDurable(ServerSettings, Map)}).
     */
    public BenchSession(ServerSettings settings, int poolSize, String schema, Map<String, String> serverConfig) {
        this.server = PostgresServer.startDurable(settings, serverConfig);
        try {
            this.database = server.scratch("locksmith_bench").create("bench");
            this.applied = LocksmithSchema.migrate(database.dataSource(), schema, EnumSet.allOf(SchemaModule.class));
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(database.jdbcUrl());
            config.setUsername(database.user());
            config.setPassword(database.password());
            config.setMaximumPoolSize(poolSize);
            config.setMinimumIdle(0);
            config.setPoolName("locksmith-bench");
            config.addDataSourceProperty("currentSchema", schema);
            this.pool = new HikariDataSource(config);
            // Execute logging off, as a production DSLContext would have it: jOOQ's LoggerListener
            // otherwise runs on every statement, even when nothing is logged.
            this.dsl = Locksmith.builder(DSL.using(pool, SQLDialect.POSTGRES, new Settings().withExecuteLogging(false)))
                    .schema(schema)
                    .build()
                    .dsl();
            this.pgbench = PgBench.on(database, schema);
            this.connectionBudget = connectionBudget(pool);
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** The server. */
    public PostgresServer server() {
        return server;
    }

    /** The {@code DSLContext} the library side of every workload uses (schema mapped). */
    public DSLContext dsl() {
        return dsl;
    }

    /** The pool of connections to the scratch database (sessions find the tables by {@code search_path}). */
    public HikariDataSource pool() {
        return pool;
    }

    /** The scratch database. */
    public ScratchDatabase database() {
        return database;
    }

    /**
     * The server settings that decide what a commit costs, as {@code name=value} pairs
     * ({@code synchronous_commit}, {@code fsync}), for the report's header.
     */
    public String durability() {
        return dsl.fetchValue("SELECT 'synchronous_commit=' || current_setting('synchronous_commit') "
                        + "|| ', fsync=' || current_setting('fsync')")
                .toString();
    }

    /**
     * {@link #durability()} and {@code autovacuum}, with autovacuum's naptime when it is on: what
     * decides how a long run's dead tuples go.
     */
    public String durabilityAndVacuum() {
        return durability()
                + dsl.fetchValue("SELECT ', autovacuum=' || current_setting('autovacuum')"
                                + " || CASE WHEN current_setting('autovacuum')::bool"
                                + " THEN ' (naptime ' || current_setting('autovacuum_naptime') || ')' ELSE '' END")
                        .toString();
    }

    /** Change sets applied to it. */
    public List<AppliedChangeSet> applied() {
        return applied;
    }

    /**
     * Readies the pool for a run of {@code variant} ({@link Runner.BeforeRun}). No run inherits
     * another's server-side session state: PostgreSQL caches a plan per session and prepared
     * statement, and a plan made while a table was tiny can outlive the table's growth; without
     * this, whichever variant ran first on a fresh table kept such plans, and the comparison
     * measured that.
     *
     * <ul>
     *   <li>A variant in this JVM finds the connections it will use already open, as many as
     *       the case's workers and eight more (at most the pool's size), each with its session
     *       reset by {@code DISCARD ALL} (prepared statements, plans, settings, {@code LISTEN}s;
     *       PgJDBC sees the command and forgets its own prepared statements too). pgbench reports
     *       its rate without its connection time, and a worker opens its connections once, at
     *       its start: when every run opened new connections, a worker drain spent the first
     *       0.2 s of a 0.7 s run mostly on the handshakes of its eight to twelve connections, the
     *       JVM busy and the server idle.</li>
     *   <li>Before a variant run by another process (pgbench, with as many clients as the case
     *       has workers) the pool keeps only as many idle connections as leave that process its
     *       connection slots.</li>
     * </ul>
     *
     * @param c the case about to run
     * @param variant its variant about to run
     */
    public void readyFor(Workload.Case c, Workload.Variant variant) {
        int idle = pool.getHikariPoolMXBean().getIdleConnections();
        int active = pool.getHikariPoolMXBean().getActiveConnections();
        try {
            if (!variant.inThisJvm()) {
                int keep = Math.max(0, connectionBudget - c.workers() - active);
                borrowAtOnce(idle, (i, connection) -> {
                    if (i >= keep) {
                        pool.evictConnection(connection);
                    }
                });
                return;
            }
            int room = Math.min(c.workers() + 8, pool.getMaximumPoolSize());
            room = Math.min(room, pool.getMaximumPoolSize() - active);
            // every idle connection is reset, and new ones opened up to the number wanted
            borrowAtOnce(Math.max(room, idle), (i, connection) -> Jdbc.update(connection, "DISCARD ALL"));
        } catch (SQLException e) {
            throw new IllegalStateException("could not ready the pool's sessions for a run", e);
        }
    }

    /** What {@link #borrowAtOnce} does with the {@code i}-th connection it borrowed. */
    @FunctionalInterface
    private interface Borrowed {
        void accept(int i, Connection connection) throws SQLException;
    }

    /**
     * Borrows {@code count} connections at once (idle ones first, then new ones), hands each to
     * {@code action}, and returns them all to the pool.
     */
    private void borrowAtOnce(int count, Borrowed action) throws SQLException {
        List<Connection> borrowed = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                Connection connection = pool.getConnection();
                borrowed.add(connection);
                action.accept(i, connection);
            }
        } finally {
            for (Connection connection : borrowed) {
                try {
                    connection.close();
                } catch (SQLException e) {
                    // back in the pool, which drops it if it is broken
                }
            }
        }
    }

    /** {@link #connectionBudget} of the server behind {@code pool}. */
    private static int connectionBudget(HikariDataSource pool) {
        try {
            long free = Jdbc.autoCommit(
                    pool,
                    c -> Jdbc.queryLong(
                            c,
                            "SELECT current_setting('max_connections')::int"
                                    + " - current_setting('superuser_reserved_connections')::int"
                                    + " - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')"));
            // the connection asking is counted among those taken, and is the pool's own
            return (int) free + 1 - 4;
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the server's connection limit", e);
        }
    }

    /** Where {@code pgbench} was found, or empty: the pgbench baselines are then left out. */
    public java.util.Optional<java.nio.file.Path> pgbench() {
        return pgbench.isPresent() ? PgBench.find() : java.util.Optional.empty();
    }

    /** The workloads by name, in the order they run. */
    public Map<String, Workload> workloads() {
        Map<String, Workload> all = new LinkedHashMap<>();
        for (Workload w : List.of(
                new EnqueueWorkload(pool, dsl, pgbench),
                QueueWorkloads.queueTx(pool, dsl, pgbench),
                QueueWorkloads.queueLease(pool, dsl, pgbench),
                new KeyedQueueWorkload(pool, dsl),
                new LimitedQueueWorkload(pool, dsl),
                new DrainWorkload(pool, dsl, pgbench),
                new PoolWorkload(pool, dsl),
                new TransferWorkload(pool, dsl))) {
            all.put(w.name(), w);
        }
        return all;
    }

    /** Workloads that only run when named: {@code sustained} (use --duration 300). */
    public Map<String, Workload> onRequest() {
        return Map.of("sustained", new SustainedWorkload(pool, dsl));
    }

    @Override
    public void close() {
        try {
            pool.close();
        } finally {
            server.close();
        }
    }
}

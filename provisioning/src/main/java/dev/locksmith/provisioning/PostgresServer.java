package dev.locksmith.provisioning;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A PostgreSQL server obtained in the one shared way (see {@link ServerSettings}): an explicit
 * server, else Testcontainers when Docker answers, else embedded PostgreSQL.
 *
 * <p>The server is used only through databases created for this run ({@link #scratch(String)});
 * nothing is written to the database named in an explicit URL. Closing the server drops every
 * scratch database still open and stops a server this process started. A JVM shutdown hook
 * does the same if {@link #close()} was never called, so a failed run leaves nothing behind.
 *
 * <p>{@link ServerSettings#postgresVersion()} chooses the major version: embedded PostgreSQL runs
 * that major's pinned binaries, Testcontainers its {@code postgres:<major>-alpine} image, and a
 * server of another major (an explicit one, or binaries the class path overrode) fails the start.
 *
 * <p>A server this class starts (Testcontainers, embedded) runs with {@code max_connections=300}
 * and {@code max_prepared_transactions=100}, so that two-phase commit can be tested; an explicit
 * server is used as it is configured.
 */
public final class PostgresServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresServer.class);

    /** {@code max_connections} of a server this class starts (Testcontainers, embedded). */
    private static final int MAX_CONNECTIONS = 300;

    /**
     * {@code max_prepared_transactions} of a server this class starts: PostgreSQL's default is 0,
     * which disables {@code PREPARE TRANSACTION}, and the two-phase worker's tests need it. An
     * explicit server keeps its own setting.
     */
    static final int MAX_PREPARED_TRANSACTIONS = 100;

    private final Source source;
    private final String adminJdbcUrl;
    private final String user;
    private final @Nullable String password;
    private final String version;
    private final int majorVersion;
    private final @Nullable AutoCloseable owned;
    private final List<ScratchDatabases> scratchSets = new CopyOnWriteArrayList<>();
    private final Thread shutdownHook;
    private volatile boolean closed;

    private PostgresServer(
            Source source,
            String adminJdbcUrl,
            String user,
            @Nullable String password,
            @Nullable AutoCloseable owned,
            OptionalInt requiredMajor) {
        this.source = source;
        this.adminJdbcUrl = adminJdbcUrl;
        this.user = user;
        this.password = password;
        this.owned = owned;
        String[] versions = queryVersion();
        this.version = "PostgreSQL " + versions[0];
        this.majorVersion = Integer.parseInt(versions[1]) / 10000;
        if (requiredMajor.isPresent() && requiredMajor.getAsInt() != majorVersion) {
            throw new IllegalStateException(source.description() + " at " + redactedUrl() + " runs " + version
                    + ", not the PostgreSQL " + requiredMajor.getAsInt()
                    + " that LOCKSMITH_PG_VERSION / locksmith.pg.version asks for");
        }
        this.shutdownHook = new Thread(this::closeQuietly, "locksmith-postgres-cleanup");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Obtains a server as this process's environment says; logs which source it used.
     *
     * @return the running server; close it to stop it and drop its scratch databases
     * @throws NoPostgresServerException at once when no source works, naming all three
     */
    public static PostgresServer start() {
        return start(ServerSettings.fromEnvironment());
    }

    /**
     * Obtains a server as {@code settings} say; logs which source it used.
     *
     * @param settings the explicit server, or the source to force, if any
     * @return the running server; close it to stop it and drop its scratch databases
     * @throws NoPostgresServerException at once when no source works, naming all three
     */
    public static PostgresServer start(ServerSettings settings) {
        return start(settings, PostgresServer::dockerAvailable, false, Map.of());
    }

    /**
     * {@link #start(ServerSettings)}, but a server this class starts commits as a production
     * server does: {@code fsync}, {@code synchronous_commit} and {@code full_page_writes} on
     * (embedded PostgreSQL otherwise runs with {@code synchronous_commit} and {@code fsync} off,
     * which makes every commit nearly free). For benchmarks whose figures should mean something
     * to users; an explicit server is used as it is configured, and a Testcontainers server is
     * durable either way.
     *
     * @param settings the explicit server, or the source to force, if any
     * @return the running server; close it to stop it and drop its scratch databases
     * @throws NoPostgresServerException at once when no source works, naming all three
     */
    public static PostgresServer startDurable(ServerSettings settings) {
        return start(settings, PostgresServer::dockerAvailable, true, Map.of());
    }

    /**
     * {@link #startDurable(ServerSettings)}, with more server settings for a server this class
     * starts (embedded: the server's configuration; Testcontainers: {@code -c name=value}), such
     * as {@code autovacuum=on} for a benchmark that should run as a production server does. An
     * explicit server is used as it is configured: read the settings back to report them.
     *
     * @param settings the explicit server, or the source to force, if any
     * @param serverConfig setting names and values, applied after the durable ones
     * @return the running server; close it to stop it and drop its scratch databases
     * @throws NoPostgresServerException at once when no source works, naming all three
     */
    public static PostgresServer startDurable(ServerSettings settings, Map<String, String> serverConfig) {
        return start(settings, PostgresServer::dockerAvailable, true, Map.copyOf(serverConfig));
    }

    static PostgresServer start(ServerSettings settings, BooleanSupplier dockerAvailable) {
        return start(settings, dockerAvailable, false, Map.of());
    }

    private static PostgresServer start(
            ServerSettings settings, BooleanSupplier dockerAvailable, boolean durable, Map<String, String> config) {
        Objects.requireNonNull(settings, "settings");
        List<String> failures = new ArrayList<>();
        List<Source> plan = ResolutionPlan.plan(settings, dockerAvailable);
        if (!plan.contains(Source.TESTCONTAINERS)
                && settings.jdbcUrl().isEmpty()
                && settings.forced().isEmpty()) {
            failures.add(Source.TESTCONTAINERS.description() + ": skipped, no Docker engine answered");
        }
        for (Source source : plan) {
            try {
                PostgresServer server = startFrom(source, settings, durable, config);
                LOG.info("using {} -> {} ({})", source.description(), server.redactedUrl(), server.version());
                return server;
            } catch (RuntimeException | Error e) {
                LOG.warn("{} failed", source.description(), e);
                failures.add(source.description() + ": " + e);
            }
        }
        throw new NoPostgresServerException(failures);
    }

    private static PostgresServer startFrom(
            Source source, ServerSettings settings, boolean durable, Map<String, String> config) {
        switch (source) {
            case EXPLICIT:
                return new PostgresServer(
                        source,
                        settings.jdbcUrl().orElseThrow(),
                        settings.user(),
                        settings.password(),
                        null,
                        settings.postgresVersion());
            case TESTCONTAINERS: {
                List<String> command = new ArrayList<>(List.of(
                        "postgres",
                        "-c",
                        "max_connections=" + MAX_CONNECTIONS,
                        "-c",
                        "max_prepared_transactions=" + MAX_PREPARED_TRANSACTIONS));
                config.forEach((name, value) -> command.addAll(List.of("-c", name + "=" + value)));
                PostgreSQLContainer container = new PostgreSQLContainer(
                                DockerImageName.parse(containerImage(settings.postgresVersion())))
                        .withCommand(command.toArray(String[]::new));
                container.start();
                try {
                    return new PostgresServer(
                            source,
                            container.getJdbcUrl(),
                            container.getUsername(),
                            container.getPassword(),
                            container::stop,
                            settings.postgresVersion());
                } catch (RuntimeException e) {
                    container.stop();
                    throw e;
                }
            }
            case EMBEDDED: {
                // Our shutdown hook owns the embedded server: zonky's hook would race with the
                // scratch-database cleanup, and under exec:java it runs after the plugin closed
                // its class loader, so it could not load the classes it needs. For the same
                // reason the data directory is deleted with plain JDK calls.
                java.io.File dataDirectory;
                EmbeddedPostgres embedded;
                try {
                    dataDirectory = java.nio.file.Files.createTempDirectory("locksmith-embedded-pg")
                            .toFile();
                    EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
                            .setPgBinaryResolver(EmbeddedBinaries.resolver(settings.postgresVersion()))
                            .setDataDirectory(dataDirectory)
                            .setCleanDataDirectory(false)
                            .setRegisterShutdownHook(false)
                            .setServerConfig("max_connections", Integer.toString(MAX_CONNECTIONS))
                            .setServerConfig("max_prepared_transactions", Integer.toString(MAX_PREPARED_TRANSACTIONS));
                    if (durable) {
                        builder.setServerConfig("fsync", "on")
                                .setServerConfig("synchronous_commit", "on")
                                .setServerConfig("full_page_writes", "on");
                    }
                    config.forEach(builder::setServerConfig);
                    embedded = builder.start();
                } catch (java.io.IOException e) {
                    throw new IllegalStateException("embedded PostgreSQL did not start: " + e.getMessage(), e);
                }
                AutoCloseable stop = () -> {
                    try {
                        embedded.close();
                    } finally {
                        deleteRecursively(dataDirectory);
                    }
                };
                try {
                    return new PostgresServer(
                            source,
                            embedded.getJdbcUrl("postgres", "postgres"),
                            "postgres",
                            null,
                            stop,
                            settings.postgresVersion());
                } catch (RuntimeException e) {
                    closeOwned(stop);
                    throw e;
                }
            }
            default:
                throw new IllegalStateException("unknown source " + source);
        }
    }

    /**
     * The Testcontainers image: {@code postgres:<major>-alpine} of the requested major, else of
     * the embedded default's, so that both paths test the same major.
     */
    static String containerImage(OptionalInt major) {
        return "postgres:" + major.orElse(EmbeddedBinaries.defaultMajor()) + "-alpine";
    }

    static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    /** {@return which of the three ways this server came from} */
    public Source source() {
        return source;
    }

    /** {@return the server's version, such as {@code PostgreSQL 17.11}} */
    public String version() {
        return version;
    }

    /** {@return the server's major version, such as 17 ({@code server_version_num / 10000})} */
    public int majorVersion() {
        return majorVersion;
    }

    /** {@return the user scratch databases are created and accessed as} */
    public String user() {
        return user;
    }

    /** {@return the password for {@link #user()}, or null when the server trusts the connection} */
    public @Nullable String password() {
        return password;
    }

    /**
     * {@return the JDBC URL of {@code database} on this server}
     *
     * @param database a database name on this server
     */
    public String jdbcUrl(String database) {
        return dataSourceFor(database).getUrl();
    }

    /**
     * {@return a non-pooled data source for {@code database} on this server}
     *
     * @param database a database name on this server
     */
    public DataSource dataSource(String database) {
        return dataSourceFor(database);
    }

    /** {@return the administrative URL with any password parameter removed, for logs} */
    public String redactedUrl() {
        return adminJdbcUrl.replaceAll("(?i)password=[^&]*", "password=***");
    }

    /**
     * A new set of scratch databases on this server, all named with {@code prefix} and a
     * unique run id. Closing this server closes the set too.
     *
     * @param prefix the start of every database name in the set
     * @return the new, empty set
     */
    public ScratchDatabases scratch(String prefix) {
        ScratchDatabases set = new ScratchDatabases(this, prefix);
        scratchSets.add(set);
        return set;
    }

    /** Opens a connection to the database named in the administrative URL. */
    Connection adminConnection() throws SQLException {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(adminJdbcUrl);
        ds.setUser(user);
        if (password != null) {
            ds.setPassword(password);
        }
        return ds.getConnection();
    }

    private PGSimpleDataSource dataSourceFor(String database) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(adminJdbcUrl);
        ds.setDatabaseName(database);
        ds.setUser(user);
        if (password != null) {
            ds.setPassword(password);
        }
        return ds;
    }

    /** {@code server_version} and {@code server_version_num}. */
    private String[] queryVersion() {
        try (Connection c = adminConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT current_setting('server_version'), current_setting('server_version_num')")) {
            rs.next();
            return new String[] {rs.getString(1), rs.getString(2)};
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "cannot connect to " + redactedUrl() + " as " + user + ": " + e.getMessage(), e);
        }
    }

    /** Drops every scratch database still open, then stops the server if this process started it. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // Called from the hook itself, or during shutdown: nothing to remove.
        }
        for (ScratchDatabases set : scratchSets) {
            set.close();
        }
        closeOwned(owned);
    }

    private void closeQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            LOG.warn("cleanup at exit failed", e);
        }
    }

    private static void deleteRecursively(java.io.File file) {
        java.io.File[] children = file.listFiles();
        if (children != null) {
            for (java.io.File child : children) {
                deleteRecursively(child);
            }
        }
        if (!file.delete() && file.exists()) {
            LOG.warn("could not delete {}", file);
        }
    }

    private static void closeOwned(@Nullable AutoCloseable owned) {
        if (owned == null) {
            return;
        }
        try {
            owned.close();
        } catch (Exception e) {
            LOG.warn("stopping the server failed", e);
        }
    }
}

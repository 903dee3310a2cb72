package dev.locksmith.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.provisioning.ScratchDatabase;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * graphile-worker as a variant of {@code bench latency}: its worker runs in Node.js
 * ({@code benchmarks/peers/graphile-worker/worker.mjs}, installed with {@code npm ci} there) on the
 * bench's database, while the bench's own producer threads add its jobs, one per transaction,
 * exactly as they enqueue locksmith's. Both sides note times on {@code CLOCK_MONOTONIC}
 * ({@link System#nanoTime()} on Linux, {@code process.hrtime} in Node.js), so a job's latency is
 * the same difference for both queues.
 */
public final class GraphileWorkerPeer {

    private static final String ADD_JOB = "SELECT id FROM graphile_worker.add_job('latency', '{}'::json)";

    private final Path directory;

    private GraphileWorkerPeer(Path directory) {
        this.directory = directory;
    }

    /**
     * graphile-worker in {@code directory}, when Node.js and its packages are there.
     *
     * @param directory where {@code worker.mjs} and its {@code node_modules} are
     * @return empty when either is missing, or this is not Linux (the clocks would differ)
     */
    public static Optional<GraphileWorkerPeer> in(Path directory) {
        boolean installed = Files.isRegularFile(directory.resolve("worker.mjs"))
                && Files.isDirectory(directory.resolve("node_modules/graphile-worker"));
        boolean linux = System.getProperty("os.name", "")
                .toLowerCase(java.util.Locale.ROOT)
                .contains("linux");
        return installed && linux ? Optional.of(new GraphileWorkerPeer(directory)) : Optional.empty();
    }

    /**
     * One run of a cell: the worker started, the producers run (a discarded warm-up first, see
     * {@link LatencyRun#runWarm}), the worker stopped.
     */
    LatencyRun.Measured run(ScratchDatabase database, int producers, int rate, Duration warmUp, Duration duration)
            throws Exception {
        LatencyRun run = new LatencyRun();
        Process node = new ProcessBuilder("node", "worker.mjs", connectionString(database), "4")
                .directory(directory.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        CountDownLatch ready = new CountDownLatch(1);
        run.readStarts(node, ready, "graphile-worker-output");
        try (HikariDataSource pool = pool(database, producers + 2)) {
            if (!ready.await(60, TimeUnit.SECONDS) || !node.isAlive()) {
                throw new IllegalStateException("graphile-worker did not start (see its output above)");
            }
            Thread.sleep(1000);
            return run.runWarm((p, i) -> addJob(pool), producers, rate, warmUp, duration);
        } finally {
            node.getOutputStream().close();
            if (!node.waitFor(30, TimeUnit.SECONDS)) {
                node.destroyForcibly();
            }
        }
    }

    private static long addJob(HikariDataSource pool) {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            long id;
            try (PreparedStatement s = c.prepareStatement(ADD_JOB);
                    ResultSet rs = s.executeQuery()) {
                rs.next();
                id = rs.getLong(1);
            }
            c.commit();
            return id;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static HikariDataSource pool(ScratchDatabase database, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database.jdbcUrl());
        config.setUsername(database.user());
        config.setPassword(database.password());
        config.setMaximumPoolSize(size);
        config.setPoolName("graphile-producers");
        return new HikariDataSource(config);
    }

    /** The database as a libpq connection string, for Node's {@code pg}. */
    static String connectionString(ScratchDatabase database) {
        String rest = database.jdbcUrl().substring("jdbc:postgresql://".length());
        int query = rest.indexOf('?');
        String hostAndDb = query < 0 ? rest : rest.substring(0, query);
        String user = URLEncoder.encode(database.user(), StandardCharsets.UTF_8);
        String password =
                database.password() == null ? "" : ":" + URLEncoder.encode(database.password(), StandardCharsets.UTF_8);
        return "postgres://" + user + password + "@" + hostAndDb;
    }
}

package dev.locksmith.bench;

import dev.locksmith.provisioning.ScratchDatabase;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Runs a SQL script through PostgreSQL's {@code pgbench} against the benchmark's scratch
 * database: the statement's own cost, with no Java on the client side, as a third baseline
 * beside the library and plain JDBC. {@code pgbench} comes with PostgreSQL's client packages
 * (Debian: {@code postgresql-client} has it under {@code /usr/lib/postgresql/<major>/bin}); where
 * it is missing the variant is left out and the report says so.
 */
final class PgBench {

    private static final Pattern CONNECTION_TIME = Pattern.compile("initial connection time = ([0-9.]+) ms");
    private static final Pattern FAILED = Pattern.compile("number of failed transactions: ([0-9]+)");

    private final Path executable;
    private final ScratchDatabase database;
    private final String schema;

    private PgBench(Path executable, ScratchDatabase database, String schema) {
        this.executable = executable;
        this.database = database;
        this.schema = schema;
    }

    /** A runner on {@code database}, or empty when no {@code pgbench} is installed. */
    static Optional<PgBench> on(ScratchDatabase database, String schema) {
        return find().map(exe -> new PgBench(exe, database, schema));
    }

    /** {@code pgbench} on the PATH, else the newest under {@code /usr/lib/postgresql/<major>/bin}. */
    static Optional<Path> find() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, "pgbench");
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        Path debian = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(debian)) {
            return Optional.empty();
        }
        try (Stream<Path> majors = Files.list(debian)) {
            return majors.map(m -> m.resolve("bin/pgbench"))
                    .filter(Files::isExecutable)
                    .max(Comparator.comparing(p -> majorOf(p.getParent().getParent())));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static int majorOf(Path dir) {
        try {
            return Integer.parseInt(dir.getFileName().toString());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * A variant that runs {@code script} on {@code clients} connections (prepared statements,
     * as PgJDBC uses them) after {@code base} prepared the data. Its units are the rows of
     * {@code jobs} its transactions removed (or added), counted before and after, over the time
     * pgbench ran (its connection time excluded): a run that empties the queue early is then
     * counted low, never high.
     *
     * @param base prepares the database for a run and verifies it after (the raw variant of the
     *     same case, so that all of them start from the same state)
     * @param ds where to count the rows
     * @param script pgbench script: SQL statements, one per line, and pgbench meta-commands
     * @param transactions per client, for a fixed amount of work (a drain); 0 to run for the
     *     benchmark's duration
     */
    Workload.Variant variant(
            Workload.Variant base,
            javax.sql.DataSource ds,
            String script,
            int clients,
            BenchOptions options,
            int transactions) {
        return new Workload.SelfTimed() {
            @Override
            public void prepare() throws Exception {
                base.prepare();
            }

            @Override
            public boolean inThisJvm() {
                return false;
            }

            @Override
            public long verify() throws Exception {
                return base.verify();
            }

            @Override
            public double measure() throws Exception {
                long before = Jdbc.autoCommit(ds, c -> Jdbc.queryLong(c, "SELECT count(*) FROM jobs"));
                double seconds = run(script, clients, options, transactions);
                long after = Jdbc.autoCommit(ds, c -> Jdbc.queryLong(c, "SELECT count(*) FROM jobs"));
                return Math.abs(before - after) / seconds;
            }
        };
    }

    /** Runs the script; returns the seconds it ran (connection time excluded). */
    double run(String script, int clients, BenchOptions options, int transactions)
            throws IOException, InterruptedException {
        Path file = Files.createTempFile("locksmith-pgbench", ".sql");
        try {
            Files.writeString(file, script, StandardCharsets.UTF_8);
            URI uri = URI.create(database.jdbcUrl().substring("jdbc:".length()));
            List<String> command = new ArrayList<>(List.of(
                    executable.toString(),
                    "--no-vacuum",
                    "--protocol=prepared",
                    "--client=" + clients,
                    "--jobs=" + Math.min(clients, Runtime.getRuntime().availableProcessors()),
                    "--file=" + file,
                    "--host=" + (uri.getHost() == null ? "localhost" : uri.getHost()),
                    "--port=" + (uri.getPort() < 0 ? 5432 : uri.getPort()),
                    "--username=" + database.user()));
            if (transactions > 0) {
                command.add("--transactions=" + transactions);
            } else {
                command.add("--time=" + Math.max(1, options.duration().toSeconds()));
            }
            command.add(database.name());
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            Map<String, String> env = pb.environment();
            env.put("PGOPTIONS", "-c search_path=" + schema);
            if (database.password() != null) {
                env.put("PGPASSWORD", database.password());
            }
            long start = System.nanoTime();
            Process process = pb.start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            boolean exited = process.waitFor(10, TimeUnit.MINUTES);
            double wall = (System.nanoTime() - start) / 1e9;
            if (!exited || process.exitValue() != 0) {
                throw new IllegalStateException("pgbench failed: " + output);
            }
            Matcher failed = FAILED.matcher(output);
            if (failed.find() && !failed.group(1).equals("0")) {
                throw new IllegalStateException("pgbench: " + failed.group(1) + " transactions failed: " + output);
            }
            Matcher connecting = CONNECTION_TIME.matcher(output);
            double connection = connecting.find() ? Double.parseDouble(connecting.group(1)) / 1000 : 0;
            return Math.max(1e-3, wall - connection);
        } finally {
            Files.deleteIfExists(file);
        }
    }
}

package dev.locksmith.cli;

import dev.locksmith.bench.BenchOptions;
import dev.locksmith.bench.BenchSession;
import dev.locksmith.bench.Report;
import dev.locksmith.bench.Result;
import dev.locksmith.bench.Runner;
import dev.locksmith.bench.Workload;
import dev.locksmith.provisioning.ServerSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The full benchmark: every case library against raw JDBC, the library in both execution modes,
 * repeated; writes table, JSON, CSV and SVG.
 */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        subcommands = {LatencyCommand.class, HorizonCommand.class},
        description =
                "Run the benchmark workloads (queue-tx, queue-lease, queue-keyed, queue-limited, drain, pool, transfer; sustained on request) "
                        + "against raw JDBC, the library in both execution modes (through jOOQ, the default, and RAW_JDBC) "
                        + "where the mode applies; `bench latency` measures pick-up latency, `bench horizon` the queues and "
                        + "the pool under a held MVCC horizon.")
final class BenchCommand implements Callable<Integer> {

    @Mixin
    private ConnectionOptions connection;

    @Mixin
    private EmbeddedServerOptions server;

    @Spec
    private CommandSpec spec;

    @Parameters(arity = "0..*", description = "workloads to run (default: all)")
    private List<String> workloads = new ArrayList<>();

    @Option(
            names = "--duration",
            description = "measured seconds per run (default ${DEFAULT-VALUE})",
            defaultValue = "3")
    private double duration;

    @Option(
            names = "--warmup",
            description = "warm-up seconds per run (default ${DEFAULT-VALUE}); a drain, one fixed amount of "
                    + "work per run, instead runs each JVM variant of a case, discarded, for three times "
                    + "this before the case's first run, and on while the JIT compiler is busy (at most "
                    + "thirty times this)",
            defaultValue = "1")
    private double warmup;

    @Option(names = "--runs", description = "runs per case (default ${DEFAULT-VALUE})", defaultValue = "3")
    private int runs;

    @Option(names = "--workers", split = ",", description = "worker counts, e.g. 1,4,16 (default: per workload)")
    private List<Integer> workers = new ArrayList<>();

    @Option(
            names = "--only",
            split = ",",
            description = "run only the cases with one of these words in their configuration, "
                    + "e.g. size=100, or batch=1,batch=10, or pessimistic; words joined by + must all be there, "
                    + "e.g. random_probes+size=100 (default: every case)")
    private List<String> only = new ArrayList<>();

    @Option(
            names = "--out",
            description =
                    "directory for results.json, results.csv, chart.svg, table.txt " + "(default: reports/<timestamp>)")
    private Path out;

    @Option(
            names = "--citus",
            description = "JDBC URL of a Citus coordinator (same user and password): run the library variant of "
                    + "each chosen workload there too, and report it beside this server's (default workloads "
                    + "with --citus: " + CITUS_DEFAULT + ")")
    private String citus;

    /** The workloads run on the cluster when none are named. */
    static final String CITUS_DEFAULT = "drain,queue-lease,pool,transfer";

    @Override
    public Integer call() throws Exception {
        BenchOptions options;
        try {
            options = new BenchOptions(
                    Duration.ofMillis((long) (warmup * 1000)),
                    Duration.ofMillis((long) (duration * 1000)),
                    runs,
                    workers,
                    false,
                    only);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        int maxWorkers =
                Math.max(64, workers.stream().mapToInt(Integer::intValue).max().orElse(0));
        Map<String, String> serverConfig = server.serverConfig(spec.commandLine());
        try (BenchSession session =
                new BenchSession(connection.settings(), maxWorkers + 8, connection.schema, serverConfig)) {
            Map<String, Workload> all = new java.util.LinkedHashMap<>(session.workloads());
            List<String> chosen = !workloads.isEmpty()
                    ? workloads
                    : citus != null ? List.of(CITUS_DEFAULT.split(",")) : List.copyOf(all.keySet());
            all.putAll(session.onRequest());
            for (String name : chosen) {
                if (!all.containsKey(name)) {
                    throw new ParameterException(
                            spec.commandLine(), "unknown workload " + name + "; choose from " + all.keySet());
                }
            }
            String pgbench = session.pgbench()
                    .map(p -> "pgbench: " + p)
                    .orElse("pgbench: not found (install PostgreSQL's client tools for the pgbench baselines)");
            System.out.printf(
                    "server: %s via %s, %s%n%s%n",
                    session.server().version(),
                    session.server().source().description(),
                    session.durabilityAndVacuum(),
                    pgbench);
            List<Workload> selected = chosen.stream().map(all::get).toList();
            Progress progress = new Progress(System.err, new Runner(options, step -> {}).steps(selected));
            Runner runner = new Runner(options, progress, session::readyFor);
            List<Result> results = new ArrayList<>();
            for (String name : chosen) {
                results.addAll(runner.run(all.get(name)));
            }
            progress.finish();
            String onCitus = citus == null ? "" : onCitus(options, chosen, results, maxWorkers);
            Report report = new Report(results);
            Path dir = out != null
                    ? out
                    : Path.of("reports", LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
            Files.createDirectories(dir);
            String header = String.format(
                    "locksmith bench %s --duration %s --warmup %s --runs %d%s%n%s via %s, %s, %d cores; %s%n%n",
                    String.join(" ", chosen),
                    duration,
                    warmup,
                    runs,
                    (workers.isEmpty() ? "" : " --workers " + workers.toString().replaceAll("[\\[\\] ]", ""))
                            + (only.isEmpty() ? "" : " --only " + String.join(",", only))
                            + server.flag(),
                    session.server().version(),
                    session.server().source().description(),
                    session.durabilityAndVacuum(),
                    Runtime.getRuntime().availableProcessors(),
                    pgbench);
            Files.writeString(dir.resolve("table.txt"), header + report.table() + onCitus);
            Files.writeString(dir.resolve("results.json"), report.json());
            Files.writeString(dir.resolve("results.csv"), report.csv());
            Files.writeString(dir.resolve("chart.svg"), report.svg());
            System.out.print(report.table());
            System.out.print(onCitus);
            System.out.printf("%nwritten: %s/{table.txt,results.json,results.csv,chart.svg}%n", dir);
            return report.violations() == 0 ? 0 : 1;
        }
    }

    /**
     * Runs the library variant of each chosen workload on the Citus coordinator, in the same
     * invocation as the single server's, and returns the table that sets them side by side.
     */
    private String onCitus(BenchOptions options, List<String> chosen, List<Result> single, int maxWorkers)
            throws Exception {
        ServerSettings here = connection.settings();
        ServerSettings cluster = new ServerSettings(
                java.util.Optional.of(citus),
                here.user(),
                here.password(),
                java.util.Optional.empty(),
                java.util.OptionalInt.empty());
        try (BenchSession session = new BenchSession(cluster, maxWorkers + 8, connection.schema)) {
            Map<String, Workload> all = new java.util.LinkedHashMap<>(session.workloads());
            all.putAll(session.onRequest());
            List<Workload> selected = chosen.stream()
                    .filter(all::containsKey)
                    .map(all::get)
                    .map(BenchCommand::libraryOnly)
                    .toList();
            Progress progress = new Progress(System.err, new Runner(options, step -> {}).steps(selected));
            Runner runner = new Runner(options, progress, session::readyFor);
            List<Result> results = new ArrayList<>();
            for (Workload workload : selected) {
                results.addAll(runner.run(workload));
            }
            progress.finish();
            StringBuilder table = new StringBuilder(String.format(
                    "%nOn Citus (%s, %s), the library variant beside this server's, same invocation:%n"
                            + "%-12s %-44s %7s %14s %14s %7s %10s%n",
                    session.server().version(),
                    session.durability(),
                    "workload",
                    "config",
                    "workers",
                    "single-node",
                    "citus",
                    "ratio",
                    "violations"));
            for (Result onCluster : results) {
                Result alone = single.stream()
                        .filter(r -> r.workload().equals(onCluster.workload())
                                && r.config().equals(onCluster.config())
                                && r.workers() == onCluster.workers()
                                && r.variant().equals(Result.LIBRARY))
                        .findFirst()
                        .orElse(null);
                table.append(String.format(
                        "%-12s %-44s %7d %14s %14s %7s %10d%n",
                        onCluster.workload(),
                        onCluster.config(),
                        onCluster.workers(),
                        alone == null ? "-" : String.format("%,.0f", alone.median()),
                        String.format("%,.0f %s", onCluster.median(), onCluster.unit()),
                        alone == null ? "-" : String.format("%.2f", onCluster.median() / alone.median()),
                        onCluster.violations()));
            }
            return table.toString();
        }
    }

    /** The workload with its cases reduced to the library variant (the baselines' SQL is one server's). */
    private static Workload libraryOnly(Workload workload) {
        return new Workload() {
            @Override
            public String name() {
                return workload.name();
            }

            @Override
            public List<Case> cases(BenchOptions options) {
                return workload.cases(options).stream()
                        .map(c ->
                                new Case(c.config(), c.workers(), c.unit(), c.library(), null, null, null, null, null))
                        .toList();
            }
        };
    }
}

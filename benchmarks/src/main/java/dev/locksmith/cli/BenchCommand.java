package dev.locksmith.cli;

import dev.locksmith.bench.BenchOptions;
import dev.locksmith.bench.BenchSession;
import dev.locksmith.bench.Report;
import dev.locksmith.bench.Result;
import dev.locksmith.bench.Runner;
import dev.locksmith.bench.Workload;
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
        description =
                "Run the benchmark workloads (queue-tx, queue-lease, queue-keyed, drain, pool, transfer; sustained on request) "
                        + "against raw JDBC, the library in both execution modes (through jOOQ, the default, and RAW_JDBC) "
                        + "where the mode applies.")
final class BenchCommand implements Callable<Integer> {

    @Mixin
    private ConnectionOptions connection;

    @Spec
    private CommandSpec spec;

    @Parameters(arity = "0..*", description = "workloads to run (default: all)")
    private List<String> workloads = new ArrayList<>();

    @Option(
            names = "--duration",
            description = "measured seconds per run (default ${DEFAULT-VALUE})",
            defaultValue = "3")
    private double duration;

    @Option(names = "--warmup", description = "warm-up seconds per run (default ${DEFAULT-VALUE})", defaultValue = "1")
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
        try (BenchSession session = new BenchSession(connection.settings(), maxWorkers + 8, connection.schema)) {
            Map<String, Workload> all = new java.util.LinkedHashMap<>(session.workloads());
            List<String> chosen = workloads.isEmpty() ? List.copyOf(all.keySet()) : workloads;
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
                    session.server().version(), session.server().source().description(), session.durability(), pgbench);
            List<Workload> selected = chosen.stream().map(all::get).toList();
            Progress progress = new Progress(System.err, new Runner(options, step -> {}).steps(selected));
            Runner runner = new Runner(options, progress, session::freshConnections);
            List<Result> results = new ArrayList<>();
            for (String name : chosen) {
                results.addAll(runner.run(all.get(name)));
            }
            progress.finish();
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
                            + (only.isEmpty() ? "" : " --only " + String.join(",", only)),
                    session.server().version(),
                    session.server().source().description(),
                    session.durability(),
                    Runtime.getRuntime().availableProcessors(),
                    pgbench);
            Files.writeString(dir.resolve("table.txt"), header + report.table());
            Files.writeString(dir.resolve("results.json"), report.json());
            Files.writeString(dir.resolve("results.csv"), report.csv());
            Files.writeString(dir.resolve("chart.svg"), report.svg());
            System.out.print(report.table());
            System.out.printf("%nwritten: %s/{table.txt,results.json,results.csv,chart.svg}%n", dir);
            return report.violations() == 0 ? 0 : 1;
        }
    }
}

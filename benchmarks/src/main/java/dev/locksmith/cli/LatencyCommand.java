package dev.locksmith.cli;

import dev.locksmith.bench.BenchSession;
import dev.locksmith.bench.GraphileWorkerPeer;
import dev.locksmith.bench.LatencyBench;
import dev.locksmith.bench.LatencyBench.Variant;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code locksmith bench latency}: pick-up latency from the producer's commit to the handler's start. */
@Command(
        name = "latency",
        mixinStandardHelpOptions = true,
        description = "Pick-up latency from the producer's COMMIT to the handler's start (p50/p90/p99/max, ms) and "
                + "the rate achieved, for P producers committing one job per transaction at R jobs/s in all; "
                + "each variant of a cell runs once per round, in turns. With --enqueue-producers, also the "
                + "single-job enqueue rate of each wake-up (NONE, AFTER_COMMIT, IN_TRANSACTION).")
final class LatencyCommand implements Callable<Integer> {

    @Mixin
    private ConnectionOptions connection;

    @Spec
    private CommandSpec spec;

    @Option(names = "--producers", split = ",", description = "producer counts (default 1,8)")
    private List<Integer> producers = new ArrayList<>(List.of(1, 8));

    @Option(names = "--rates", split = ",", description = "jobs per second, all producers together (default 100,1000)")
    private List<Integer> rates = new ArrayList<>(List.of(100, 1000));

    @Option(
            names = "--variants",
            split = ",",
            description = "job-worker, transactional, job-worker-other-jvm, transactional-other-jvm, in-transaction, "
                    + "in-transaction-other-jvm, poll, fixed-poll, pgbouncer-poll, "
                    + "pgbouncer-listen-direct, graphile-worker (default: each that can run here)")
    private List<String> variants = new ArrayList<>();

    @Option(
            names = "--duration",
            description = "seconds of producing per run (default ${DEFAULT-VALUE})",
            defaultValue = "10")
    private double duration;

    @Option(
            names = "--warmup",
            description = "seconds of discarded producing before each measured run, at its rate, so that a worker "
                    + "started for the run is compiled as in a running service (default ${DEFAULT-VALUE}; 0 for none)",
            defaultValue = "3")
    private double warmUp;

    @Option(
            names = "--rounds",
            description = "runs of each variant per cell (default ${DEFAULT-VALUE})",
            defaultValue = "3")
    private int rounds;

    @Option(
            names = "--pgbouncer-port",
            description = "a PgBouncer on 127.0.0.1 in transaction mode in front of the server (.ci/pgbouncer "
                    + "starts one on 6433): adds the pgbouncer-* variants")
    private Integer pgBouncerPort;

    @Option(
            names = "--graphile",
            description = "where graphile-worker is installed (default ${DEFAULT-VALUE}; npm ci there)",
            defaultValue = "benchmarks/peers/graphile-worker")
    private Path graphile;

    @Option(
            names = "--enqueue-producers",
            description = "also measure the single-job enqueue rate of each wake-up with this many producers (e.g. 16)")
    private Integer enqueueProducers;

    @Option(names = "--out", description = "directory for table.txt (default: reports/latency-<timestamp>)")
    private Path out;

    @Override
    public Integer call() throws Exception {
        if (duration <= 0
                || warmUp < 0
                || rounds < 1
                || producers.stream().anyMatch(p -> p < 1)
                || rates.stream().anyMatch(r -> r < 1)) {
            throw new ParameterException(
                    spec.commandLine(), "duration, rounds, producers and rates must be positive, warmup not negative");
        }
        try (BenchSession session = new BenchSession(connection.settings(), 8, connection.schema)) {
            if (pgBouncerPort != null
                    && !session.database().jdbcUrl().contains("//127.0.0.1:5432/")
                    && !session.database().jdbcUrl().contains("//localhost:5432/")) {
                throw new ParameterException(
                        spec.commandLine(),
                        "--pgbouncer-port needs the server on 127.0.0.1:5432 (where .ci/pgbouncer forwards): use --url");
            }
            Optional<GraphileWorkerPeer> peer = GraphileWorkerPeer.in(graphile);
            LatencyBench bench = new LatencyBench(session.database(), connection.schema, pgBouncerPort, peer);
            List<Variant> chosen = new ArrayList<>();
            try {
                for (String v : variants) {
                    chosen.add(Variant.of(v));
                }
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
            if (chosen.isEmpty()) {
                for (Variant v : Variant.values()) {
                    if (bench.runs(v)) {
                        chosen.add(v);
                    }
                }
            }
            for (Variant v : chosen) {
                if (!bench.runs(v)) {
                    throw new ParameterException(
                            spec.commandLine(),
                            v.label() + " cannot run here: "
                                    + (v == Variant.GRAPHILE_WORKER
                                            ? "run npm ci in " + graphile + " (Node.js, Linux)"
                                            : "give --pgbouncer-port"));
                }
            }
            StringBuilder table = new StringBuilder(String.format(
                    "locksmith bench latency --warmup %s --duration %s --rounds %d%n%s via %s, %s, %d cores%s%n%n",
                    warmUp,
                    duration,
                    rounds,
                    session.server().version(),
                    session.server().source().description(),
                    session.durability(),
                    Runtime.getRuntime().availableProcessors(),
                    peer.isEmpty() ? "; graphile-worker not installed (npm ci in " + graphile + ")" : ""));
            table.append(String.format(
                    "%-24s %9s %7s %9s %8s %8s %8s %8s %8s%n",
                    "variant", "producers", "rate", "achieved", "p50 ms", "p90 ms", "p99 ms", "max ms", "missing"));
            Progress progress = new Progress(System.err, producers.size() * rates.size() * chosen.size() * rounds);
            List<LatencyBench.Row> rows = bench.run(
                    chosen,
                    producers,
                    rates,
                    Duration.ofMillis((long) (warmUp * 1000)),
                    Duration.ofMillis((long) (duration * 1000)),
                    rounds,
                    progress);
            progress.finish();
            for (LatencyBench.Row r : rows) {
                table.append(String.format(
                        "%-24s %9d %7d %9.0f %8.1f %8.1f %8.1f %8.1f %8d%n",
                        r.variant().label(),
                        r.producers(),
                        r.rate(),
                        r.achievedRate(),
                        r.p50(),
                        r.p90(),
                        r.p99(),
                        r.max(),
                        r.missing() + r.failures()));
            }
            if (enqueueProducers != null) {
                table.append(String.format(
                        "%nsingle-job enqueue, one per transaction, %d producers, %d rounds of %s s:%n%-16s %10s %14s%n",
                        enqueueProducers, rounds, duration, "wake-up", "jobs/s", "x no wake-up"));
                for (LatencyBench.EnqueueRate r : bench.enqueueRates(
                        enqueueProducers,
                        Duration.ofMillis((long) (duration * 1000)),
                        rounds,
                        step -> System.err.println(step))) {
                    table.append(
                            String.format("%-16s %10.0f %14.2f%n", r.wakeUp(), r.jobsPerSecond(), r.ratioToNone()));
                }
            }
            Path dir = ReportFiles.writeTable(out, "latency", table);
            System.out.print(table);
            System.out.printf("%nwritten: %s/table.txt%n", dir);
            boolean lost = rows.stream().anyMatch(r -> r.missing() > 0);
            return lost ? 1 : 0;
        }
    }
}

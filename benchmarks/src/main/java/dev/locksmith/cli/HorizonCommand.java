package dev.locksmith.cli;

import dev.locksmith.bench.BenchSession;
import dev.locksmith.bench.HorizonBench;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code locksmith bench horizon}: the queues and the pool before, during and after a held MVCC horizon. */
@Command(
        name = "horizon",
        mixinStandardHelpOptions = true,
        description = "The held-horizon scenario: a producer at a fixed rate feeding a default JobWorker, a plain "
                + "DELETE ... SKIP LOCKED queue on one table and the same on rotating tables, and the channel-account pool acquiring and releasing at a fixed "
                + "rate (on its layout, and on one with indexes over lease columns where its own has none), through a baseline, "
                + "a phase while another session holds a REPEATABLE READ snapshot open, and an after phase.")
final class HorizonCommand implements Callable<Integer> {

    @Mixin
    private ConnectionOptions connection;

    @Spec
    private CommandSpec spec;

    @Option(
            names = "--baseline",
            description = "seconds before the hold (default ${DEFAULT-VALUE})",
            defaultValue = "60")
    private long baseline;

    @Option(
            names = "--hold",
            description = "seconds the horizon is held (default ${DEFAULT-VALUE})",
            defaultValue = "120")
    private long hold;

    @Option(names = "--after", description = "seconds after the hold (default ${DEFAULT-VALUE})", defaultValue = "60")
    private long after;

    @Option(
            names = "--rate",
            description = "jobs/s each producer offers (default ${DEFAULT-VALUE})",
            defaultValue = "1000")
    private int rate;

    @Option(
            names = "--batch",
            description = "jobs per producer transaction (default ${DEFAULT-VALUE})",
            defaultValue = "10")
    private int batch;

    @Option(
            names = "--pool-accounts",
            description = "accounts in each pool (default ${DEFAULT-VALUE})",
            defaultValue = "1000")
    private int poolAccounts;

    @Option(
            names = "--pool-rate",
            description = "acquire + release cycles/s offered to each pool (default ${DEFAULT-VALUE})",
            defaultValue = "200")
    private int poolRate;

    @Option(
            names = "--generation",
            description =
                    "milliseconds each rotating table of the plain rotating queue is current (default ${DEFAULT-VALUE})",
            defaultValue = "1000")
    private long generation;

    @Mixin
    private EmbeddedServerOptions server;

    @Option(
            names = "--loads",
            split = ",",
            description = "queues (a default JobWorker, a plain DELETE queue, rotating tables), pool, "
                    + "transactional (a default TransactionalWorker, with the plain queue) and pool-prototype (a pool "
                    + "whose leases are rows in rotating tables): one or more, in one run (default ${DEFAULT-VALUE})",
            defaultValue = "queues,pool")
    private List<String> loads;

    @Option(names = "--out", description = "directory for table.txt (default: reports/horizon-<timestamp>)")
    private Path out;

    @Override
    public Integer call() throws Exception {
        HorizonBench.Options options;
        try {
            options = new HorizonBench.Options(
                    Duration.ofSeconds(baseline),
                    Duration.ofSeconds(hold),
                    Duration.ofSeconds(after),
                    rate,
                    batch,
                    poolAccounts,
                    poolRate,
                    generation,
                    loads.contains("queues"),
                    loads.contains("pool"),
                    loads.contains("transactional"),
                    loads.contains("pool-prototype"));
            if (!List.of("queues", "pool", "transactional", "pool-prototype").containsAll(loads)) {
                throw new IllegalArgumentException("--loads takes queues, pool, transactional and pool-prototype");
            }
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        Map<String, String> config = server.serverConfig(spec.commandLine());
        try (BenchSession session = new BenchSession(connection.settings(), 24, connection.schema, config)) {
            String header = String.format(
                    "locksmith bench horizon --baseline %d --hold %d --after %d --rate %d --batch %d --pool-accounts %d"
                            + " --pool-rate %d --generation %d --loads %s%s%n%s via %s, %s, %d cores%n",
                    baseline,
                    hold,
                    after,
                    rate,
                    batch,
                    poolAccounts,
                    poolRate,
                    generation,
                    String.join(",", loads),
                    server.flag(),
                    session.server().version(),
                    session.server().source().description(),
                    session.durabilityAndVacuum(),
                    Runtime.getRuntime().availableProcessors());
            System.out.print(header);
            HorizonBench bench = new HorizonBench(session.pool(), session.dsl(), connection.schema, options);
            Connection holder = DriverManager.getConnection(
                    session.database().jdbcUrl(),
                    session.database().user(),
                    session.database().password());
            List<HorizonBench.Row> rows = bench.run(System.err::println, holder);
            String table = header + table(rows);
            Path dir = ReportFiles.writeTable(out, "horizon", table);
            System.out.print(table.substring(header.length()));
            System.out.printf("%nwritten: %s/table.txt%n", dir);
            return rows.stream().anyMatch(r -> r.failures() > 0) ? 1 : 0;
        }
    }

    private static String table(List<HorizonBench.Row> rows) {
        StringBuilder t = new StringBuilder(String.format(
                "%n%-58s %-13s %7s %6s %9s %9s %8s %8s %9s %7s %8s %5s%n",
                "load",
                "phase",
                "done/s",
                "min/s",
                "backlog+",
                "dead@end",
                "size+ MB",
                "idx+ MB",
                "median ms",
                "p90 ms",
                "timed",
                "fail"));
        String last = "";
        for (HorizonBench.Row r : rows) {
            t.append(String.format(
                    "%-58s %-13s %7.0f %6.0f %9s %9d %8.1f %8.1f %9.2f %7.2f %8d %5d%n",
                    r.load().equals(last) ? "" : r.load(),
                    r.phase(),
                    r.perSecond(),
                    r.minPerSecond(),
                    r.load().startsWith("pool") ? "-" : String.format("%+d", r.backlogGrowth()),
                    r.deadTuplesAtEnd(),
                    r.sizeGrowthBytes() / 1e6,
                    r.indexGrowthBytes() / 1e6,
                    r.medianMillis(),
                    r.p90Millis(),
                    r.timed(),
                    r.failures()));
            last = r.load();
        }
        t.append(String.format("%nmedian / p90 ms: of the timed statement, as the caller sees it:%n"));
        rows.stream()
                .map(r -> "  " + r.load() + ": " + r.timedWhat())
                .distinct()
                .forEach(line -> t.append(line).append(System.lineSeparator()));
        t.append(
                "size+ / idx+: growth of the table with its indexes / of the indexes alone; dead@end: pg_stat_get_dead_tuples when the phase ended (statistics lag by up to a few seconds);"
                        + " the plain queue's and pools' tables are VACUUMed every 5 s by the bench, the JobWorker's by itself"
                        + System.lineSeparator());
        return t.toString();
    }
}

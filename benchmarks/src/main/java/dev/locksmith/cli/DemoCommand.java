package dev.locksmith.cli;

import dev.locksmith.bench.BenchOptions;
import dev.locksmith.bench.BenchSession;
import dev.locksmith.bench.Report;
import dev.locksmith.bench.Result;
import dev.locksmith.bench.Runner;
import dev.locksmith.bench.Workload;
import dev.locksmith.schema.AppliedChangeSet;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The main job: obtains PostgreSQL the shared way, migrates a scratch database, runs a short
 * version of every workload against raw JDBC, prints the table, and exits non-zero on any
 * correctness violation (lost job, duplicate, money not conserved, account held twice).
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = "Obtain PostgreSQL (explicit URL, else Docker, else embedded), migrate a scratch database, "
                + "run a short version of every workload, and report.")
final class DemoCommand implements Callable<Integer> {

    @Mixin
    private ConnectionOptions connection;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        BenchOptions options = new BenchOptions(Duration.ofMillis(300), Duration.ofSeconds(1), 1, List.of(), true);
        try (BenchSession session = new BenchSession(connection.settings(), 24, connection.schema)) {
            out.printf(
                    "server:   %s via %s%n",
                    session.server().version(), session.server().source().description());
            out.printf(
                    "database: %s (scratch, dropped at exit)%n",
                    session.database().name());
            out.printf("schema:   %d change sets applied:", session.applied().size());
            for (AppliedChangeSet c : session.applied()) {
                out.print(" " + c.id());
            }
            out.println();
            Progress progress = new Progress(
                    System.err,
                    new Runner(options, step -> {}).steps(session.workloads().values()));
            Runner runner = new Runner(options, progress, session::readyFor);
            List<Result> results = new ArrayList<>();
            for (Workload w : session.workloads().values()) {
                results.addAll(runner.run(w));
            }
            progress.finish();
            Report report = new Report(results);
            out.println();
            out.print(report.table());
            out.println();
            if (report.violations() > 0) {
                out.printf("FAILED: %d correctness violations%n", report.violations());
                return 1;
            }
            out.println("OK: no lost or duplicated jobs, money conserved, no account held twice. "
                    + "(1-second runs; use 'locksmith bench' for real figures.)");
            return 0;
        }
    }
}

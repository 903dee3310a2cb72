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
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The main job: obtains PostgreSQL the shared way, migrates a scratch database, runs a short
 * version of every workload, the library beside plain JDBC running the same SQL, prints the
 * table, and exits non-zero on any correctness violation (lost job, duplicate, money not
 * conserved, account held twice).
 *
 * <p>Every run takes a short fixed time ({@link #WARMUP} then {@link #DURATION}, or a drain of its
 * jobs), with none of {@code bench}'s repeated warm-up while the JIT compiler is busy, and the
 * progress shows each step and each workload's outcome as it finishes: the demo shows the
 * workloads at work and checks them, in well under a minute; {@code locksmith bench} measures.
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = "Obtain PostgreSQL (explicit URL, else Docker, else embedded), migrate a scratch database, "
                + "run a short version of every workload (library and plain JDBC), check correctness, and report.")
final class DemoCommand implements Callable<Integer> {

    /** The warm-up of each run, before it is measured. */
    static final Duration WARMUP = Duration.ofMillis(100);

    /** The measured time of each run that is not a drain. */
    static final Duration DURATION = Duration.ofMillis(400);

    @Mixin
    private ConnectionOptions connection;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        long began = System.nanoTime();
        BenchOptions options = BenchOptions.demo(WARMUP, DURATION);
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
            out.flush();
            Progress progress = new Progress(
                    System.err,
                    new Runner(options, step -> {}).steps(session.workloads().values()));
            Runner runner = new Runner(options, progress, session::readyFor);
            List<Result> results = new ArrayList<>();
            for (Workload w : session.workloads().values()) {
                long start = System.nanoTime();
                List<Result> done = runner.run(w);
                results.addAll(done);
                long violations = done.stream().mapToLong(Result::violations).sum();
                progress.accept(String.format(
                        Locale.ROOT,
                        "  %-11s %2d runs, %s (%.1f s)",
                        w.name(),
                        done.size(),
                        violations == 0 ? "no violation" : violations + " VIOLATIONS",
                        (System.nanoTime() - start) / 1e9));
            }
            progress.finish();
            Report report = new Report(results);
            out.println();
            out.print(report.brief());
            out.println();
            double seconds = (System.nanoTime() - began) / 1e9;
            if (report.violations() > 0) {
                out.printf(Locale.ROOT, "FAILED: %d correctness violations (%.0f s)%n", report.violations(), seconds);
                return 1;
            }
            out.printf(
                    Locale.ROOT,
                    "OK: no lost or duplicated jobs, money conserved, no account held twice (%.0f s). "
                            + "Runs of %d ms, once each: use 'locksmith bench' for figures.%n",
                    seconds,
                    DURATION.toMillis());
            return 0;
        }
    }
}

package dev.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The runner's warm-up of self-timed variants: discarded runs in this JVM, none for another
 * process, longer while the JIT compiler is busy, none when the options do not ask for it (the
 * demo). The clocks are fakes the runs advance (a compiler clock, and the warm-up's own clock by
 * 5 ms a run), so the counts are exact on a machine of any speed and nothing waits.
 */
class RunnerWarmUpTest {

    /** A self-timed variant whose run takes 5 ms of the fake clock; warmed up if it asks. */
    private static final class Fake implements Workload.SelfTimed {
        final boolean inJvm;
        final List<String> calls = new ArrayList<>();
        /** Milliseconds of compilation the n-th run causes (0-based); zero for runs beyond it. */
        final java.util.function.IntToLongFunction compiles;
        /** The fake compiler's time so far, in milliseconds. */
        long compiledMillis;
        /** The fake clock, in nanoseconds. */
        long nanos;

        Fake(boolean inJvm) {
            this(inJvm, run -> 0);
        }

        Fake(boolean inJvm, java.util.function.IntToLongFunction compiles) {
            this.inJvm = inJvm;
            this.compiles = compiles;
        }

        @Override
        public void prepare() {
            calls.add("prepare");
        }

        @Override
        public double measure() {
            compiledMillis += compiles.applyAsLong((int) measured());
            calls.add("measure");
            nanos += Duration.ofMillis(5).toNanos();
            return 1;
        }

        @Override
        public long verify() {
            return 0;
        }

        @Override
        public boolean warmsUpByRepeating() {
            return inJvm;
        }

        long measured() {
            return calls.stream().filter("measure"::equals).count();
        }
    }

    private static List<Result> run(Duration warmup, Fake library, Fake pgbench) throws Exception {
        return run(new BenchOptions(warmup, Duration.ofSeconds(1), 2, List.of(), false), library, pgbench);
    }

    private static List<Result> run(BenchOptions options, Fake library, Fake pgbench) throws Exception {
        Workload workload = new Workload() {
            @Override
            public String name() {
                return "fake";
            }

            @Override
            public List<Case> cases(BenchOptions o) {
                return List.of(new Case("fake", 1, "units/s", library, null).withPgbench(pgbench, null));
            }
        };
        return new Runner(options, step -> {}, (c, variant) -> {}, () -> library.compiledMillis, () -> library.nanos)
                .run(workload);
    }

    @Test
    void selfTimedVariantsInThisJvmRunDiscardedUntilThreeTimesTheWarmUpIsSpent() throws Exception {
        Fake library = new Fake(true);
        Fake pgbench = new Fake(false);

        List<Result> results = run(Duration.ofMillis(10), library, pgbench);

        // 30 ms of warm-up at 5 ms a run: six discarded runs, each prepared as a measured one is
        assertThat(library.measured()).isEqualTo(2 + 6);
        for (int i = 0; i < library.calls.size(); i += 2) {
            assertThat(library.calls.subList(i, i + 2)).containsExactly("prepare", "measure");
        }
        // a variant that does not ask (pgbench, in its own process; sustained) is not warmed up
        assertThat(pgbench.measured()).isEqualTo(2);
        // only the measured runs are reported
        assertThat(results).allSatisfy(r -> assertThat(r.throughput()).hasSize(2));
    }

    @Test
    void warmUpGoesOnWhileTheLastRunKeptTheCompilerBusy() throws Exception {
        // each of the first ten runs compiles for a second, far more than its 5 ms
        Fake library = new Fake(true, run -> run < 10 ? 1000 : 0);
        Fake pgbench = new Fake(false);

        run(Duration.ofMillis(10), library, pgbench);

        // the ten busy runs are discarded, and the first quiet one after them ends the warm-up
        assertThat(library.measured()).isEqualTo(2 + 11);
    }

    @Test
    void aCompilerThatNeverQuietsDownEndsTheWarmUpAtThirtyTimesTheWarmUpTime() throws Exception {
        Fake library = new Fake(true, run -> 1000);
        Fake pgbench = new Fake(false);

        run(Duration.ofMillis(10), library, pgbench);

        // 300 ms of discarded runs of 5 ms: sixty, ten times what the 30 ms minimum alone runs
        assertThat(library.measured()).isEqualTo(2 + 60);
    }

    @Test
    void theDemoRunsEachVariantOnceForItsFixedTimeWithoutRepeatedWarmUp() throws Exception {
        Fake library = new Fake(true, run -> 1000);
        Fake pgbench = new Fake(false);

        List<Result> results = run(BenchOptions.demo(Duration.ofMillis(10), Duration.ofMillis(50)), library, pgbench);

        assertThat(library.measured()).isEqualTo(1);
        // the demo's variants are the library and the plain-JDBC baseline: pgbench is not run
        assertThat(pgbench.measured()).isZero();
        assertThat(results).extracting(Result::variant).containsExactly(Result.LIBRARY);
    }

    @Test
    void noWarmUpRunsWithoutAWarmUpTime() throws Exception {
        Fake library = new Fake(true);
        Fake pgbench = new Fake(false);

        run(Duration.ZERO, library, pgbench);

        assertThat(library.measured()).isEqualTo(2);
        assertThat(pgbench.measured()).isEqualTo(2);
    }
}

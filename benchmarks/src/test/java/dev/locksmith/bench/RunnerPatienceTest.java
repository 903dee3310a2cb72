package dev.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A run measures work, not the machine: on a machine too loaded for an operation to finish
 * within the duration, the run goes on until one has, so that "it did work" is an outcome a test
 * may assert. The operation here finds nothing for its first ten calls of 20 ms each, which no
 * machine finishes within the 50 ms the run lasts.
 */
class RunnerPatienceTest {

    @Test
    void aRunInWhichNoOperationFinishedGoesOnUntilOneHas() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Workload.Variant slowToStart = new Workload.Variant() {
            @Override
            public void prepare() {}

            @Override
            public Workload.Op op(int worker) {
                return () -> {
                    if (calls.incrementAndGet() <= 10) {
                        TimeUnit.MILLISECONDS.sleep(20);
                        return 0;
                    }
                    return 1;
                };
            }

            @Override
            public long verify() {
                return 0;
            }
        };
        Workload workload = new Workload() {
            @Override
            public String name() {
                return "slow";
            }

            @Override
            public List<Case> cases(BenchOptions o) {
                return List.of(new Case("slow", 1, "units/s", slowToStart, null));
            }
        };
        BenchOptions options = new BenchOptions(Duration.ZERO, Duration.ofMillis(50), 1, List.of(), false);

        List<Result> results = new Runner(options, step -> {}).run(workload);

        assertThat(calls.get()).isGreaterThan(10);
        assertThat(results)
                .singleElement()
                .satisfies(r -> assertThat(r.median()).isPositive());
    }
}

package dev.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.provisioning.ServerSettings;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The sustained workload's three consumers run briefly against a producer: each consumed jobs,
 * no job is left running, and the first and last windows, dead tuples and autovacuum runs are
 * reported. Outcomes only: how many jobs a window saw depends on the machine (on a loaded one the
 * first second of the leased library variant saw none), so no rate is asserted.
 */
class SustainedWorkloadTest {

    @Test
    void everyConsumerDrainsWhileTheProducerRefillsAndTheWindowsAreReported() throws Exception {
        BenchOptions options = new BenchOptions(Duration.ZERO, Duration.ofSeconds(5), 1, List.of(), true);
        List<Result> results;
        try (BenchSession session = new BenchSession(ServerSettings.fromEnvironment(), 12, "bench_sustained")) {
            results = new Runner(options, step -> {}).run(session.onRequest().get("sustained"));
        }
        assertThat(results)
                .extracting(r -> r.config().replaceAll(" .*", "") + "/" + r.variant())
                .containsExactlyInAnyOrder("lease/library", "lease/raw", "job-worker/library", "tx-worker/library");
        assertThat(results).allSatisfy(r -> {
            assertThat(r.violations())
                    .as("%s %s jobs left running", r.config(), r.variant())
                    .isZero();
            assertThat(r.extras())
                    .as("%s %s", r.config(), r.variant())
                    .containsKeys(
                            "dead_tuples_at_end", "autovacuums", "first_window_jobs_per_s", "last_window_jobs_per_s")
                    .containsEntry("window_s", 1.0)
                    .hasEntrySatisfying(
                            "consumed_jobs",
                            v -> assertThat(v)
                                    .as("%s %s consumed jobs", r.config(), r.variant())
                                    .isPositive());
        });
    }
}

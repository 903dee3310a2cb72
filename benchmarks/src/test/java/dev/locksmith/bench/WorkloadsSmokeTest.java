package dev.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.provisioning.ServerSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Every workload, library and raw, runs briefly on a real database (obtained the shared way),
 * and its correctness counters must be zero: no lost or duplicated job, money conserved, no
 * account held twice. No timing is asserted, nor any rate.
 */
class WorkloadsSmokeTest {

    /**
     * In a schema other than the default, so that every repository and worker the workloads use
     * proves it renders the mapped schema (the raw baselines find it by search_path).
     */
    @Test
    void everyWorkloadRunsAndFindsNoViolation() throws Exception {
        BenchOptions options = new BenchOptions(Duration.ofMillis(100), Duration.ofMillis(500), 1, List.of(2), true);
        List<Result> results = new ArrayList<>();
        try (BenchSession session = new BenchSession(ServerSettings.fromEnvironment(), 12, "bench_locks")) {
            Runner runner = new Runner(options, step -> {});
            // jobs and its four generations' partitions, job_unique_keys, job_history and its
            // default partition, job_concurrency_limits, job_key_starts, schedules, channel_accounts,
            // channel_account_leases and its four slots, accounts, account_transfers,
            // lock_wait_event, deadlock_event
            assertThat(session.dsl().fetchValue("SELECT count(*) FROM pg_tables WHERE schemaname = 'bench_locks'"))
                    .isEqualTo(21L);
            for (Workload workload : session.workloads().values()) {
                results.addAll(runner.run(workload));
            }
        }
        Set<String> workloads = results.stream().map(Result::workload).collect(Collectors.toSet());
        assertThat(workloads)
                .containsExactlyInAnyOrder(
                        "queue-tx",
                        "queue-lease",
                        "queue-keyed",
                        "queue-limited",
                        "drain",
                        "pool",
                        "transfer",
                        "enqueue");
        assertThat(results)
                .allSatisfy(r -> assertThat(r.violations())
                        .as("%s %s %s", r.workload(), r.config(), r.variant())
                        .isZero());
        // Work done is an outcome where the runner waits for it: a run in this JVM goes on past
        // its duration until an operation has finished, and a drain until the queue is empty.
        // pgbench runs for its whole seconds, whatever it managed in them: no rate is asserted.
        assertThat(results)
                .filteredOn(r -> !r.variant().startsWith(Result.PGBENCH))
                .allSatisfy(r -> assertThat(r.median())
                        .as("%s %s %s did work", r.workload(), r.config(), r.variant())
                        .isPositive());
        assertThat(results).anySatisfy(r -> assertThat(r.variant()).isEqualTo("raw"));
        for (String variant : List.of("library-jdbc", "library-listened")) {
            assertThat(results)
                    .filteredOn(r -> r.variant().equals(variant))
                    .extracting(Result::workload)
                    .contains("queue-tx", "queue-lease", "pool", "transfer");
        }
        assertThat(results)
                .filteredOn(r -> !r.workload().equals("drain") && !r.variant().startsWith(Result.PGBENCH))
                .allSatisfy(r -> assertThat(r.extras()).containsKey(Result.CLIENT_CPU));
        if (PgBench.find().isPresent()) {
            for (String variant : List.of(Result.PGBENCH, Result.PGBENCH_PLAIN)) {
                assertThat(results)
                        .filteredOn(r -> r.variant().equals(variant))
                        .extracting(Result::workload)
                        .contains("queue-tx", "queue-lease", "drain", "enqueue");
            }
        }
        assertThat(new Report(results).violations()).isZero();
    }
}

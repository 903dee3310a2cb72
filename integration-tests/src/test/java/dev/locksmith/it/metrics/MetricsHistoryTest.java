package dev.locksmith.it.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.CountingContext;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.micrometer.QueueDepthMetrics;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The history gauges read the statistics, not the rows: after ANALYZE they equal the rows kept
 * (reltuples is exact for a table ANALYZE read whole), one catalog statement per refresh, and rows
 * added since the last ANALYZE are not seen until the next: an estimate, as documented.
 */
class MetricsHistoryTest extends DatabaseTest {

    @Test
    void historyGaugesAreTheStatisticsReadOncePerInterval() {
        JobQueue queue = new JobQueue(dsl);
        queue.prepareHistory(0);
        dsl.execute("INSERT INTO locksmith.job_history (id, queue, kind, run_at, status) "
                + "SELECT i, 'm', 'k', now(), 'done' FROM generate_series(1, 5000) i");
        dsl.execute("ANALYZE locksmith.job_history");
        MockClock clock = new MockClock();
        SimpleMeterRegistry registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
        CountingContext counting = new CountingContext(dsl);
        QueueDepthMetrics.builder(new JobQueue(counting.dsl()), List.of("m"))
                .refreshInterval(Duration.ofSeconds(10))
                .build()
                .bindTo(registry);

        assertThat(registry.get("locksmith.jobs.history.rows").gauge().value()).isEqualTo(5000.0);
        assertThat(registry.get("locksmith.jobs.history.partitions").gauge().value())
                .as("today's partition and the default")
                .isEqualTo(2.0);
        assertThat(counting.statements()).isEqualTo(1);

        dsl.execute("INSERT INTO locksmith.job_history (id, queue, kind, run_at, status) "
                + "SELECT i, 'm', 'k', now(), 'done' FROM generate_series(5001, 6000) i");
        clock.add(Duration.ofSeconds(10));
        assertThat(registry.get("locksmith.jobs.history.rows").gauge().value())
                .as("not counted: the statistics still say 5,000")
                .isEqualTo(5000.0);
        assertThat(counting.statements()).isEqualTo(2);
    }
}

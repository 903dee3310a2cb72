package dev.locksmith.it.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.audit.HorizonReport;
import dev.locksmith.it.support.CountingContext;
import dev.locksmith.micrometer.HorizonMetrics;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The horizon gauges: the oldest holder's age in seconds and in transactions, read once per refresh interval. */
class MetricsHorizonTest extends MetricsDatabaseTest {

    @Test
    void gaugesShowTheOldestHolderReadOncePerRefreshInterval() throws Exception {
        dsl.execute("CREATE TABLE IF NOT EXISTS horizon_m (x int)");
        MockClock clock = new MockClock();
        SimpleMeterRegistry gauges = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
        CountingContext counting = new CountingContext(dsl);
        HorizonMetrics horizon = HorizonMetrics.builder(new HorizonReport(counting.dsl()))
                .refreshInterval(Duration.ofSeconds(10))
                .build();
        horizon.bindTo(gauges);
        try (Connection held = pool.getConnection()) {
            held.setAutoCommit(false);
            try (Statement s = held.createStatement()) {
                s.execute("INSERT INTO horizon_m VALUES (1)");
                s.execute("SELECT pg_sleep(0.2)");
            }
            for (int i = 0; i < 3; i++) {
                dsl.execute("INSERT INTO horizon_m VALUES (2)");
            }

            assertThat(value(gauges, "locksmith.horizon.age")).isGreaterThanOrEqualTo(0.2);
            assertThat(value(gauges, "locksmith.horizon.xmin.age")).isGreaterThanOrEqualTo(4);
            assertThat(counting.statements()).isEqualTo(1);
            assertThat(gauges.get("locksmith.horizon.age").gauge().getId().getTags())
                    .isEmpty();
            held.rollback();
        }
        clock.add(Duration.ofSeconds(10).minusMillis(1));
        // within the interval: the reading is not repeated
        assertThat(value(gauges, "locksmith.horizon.age")).isGreaterThanOrEqualTo(0.2);
        assertThat(counting.statements()).isEqualTo(1);

        clock.add(Duration.ofMillis(1));
        assertThat(value(gauges, "locksmith.horizon.age")).isZero();
        assertThat(value(gauges, "locksmith.horizon.xmin.age")).isZero();
        assertThat(counting.statements()).isEqualTo(2);

        horizon.close();
        assertThat(gauges.find("locksmith.horizon.age").gauges()).isEmpty();
    }

    private static double value(SimpleMeterRegistry registry, String name) {
        return registry.get(name).gauge().value();
    }
}

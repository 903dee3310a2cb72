package dev.locksmith.it.metrics;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.locksmith.it.support.CountingContext;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.micrometer.QueueDepthMetrics;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Queue depth gauges equal to known numbers, measured at most once per refresh interval (time made
 * to pass with the registry's {@link MockClock}, statements counted on the queue's context), and
 * a failed measurement that keeps the last values without throwing.
 */
class MetricsQueueDepthTest extends DatabaseTest {

    private static final Duration INTERVAL = Duration.ofSeconds(10);

    private JobQueue queue;
    private MockClock clock;
    private SimpleMeterRegistry registry;
    private CountingContext counting;

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(dsl);
        clock = new MockClock();
        registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
        counting = new CountingContext(dsl);
    }

    private double depth(String q, String status) {
        return registry.get("locksmith.jobs.depth")
                .tag("queue", q)
                .tag("status", status)
                .gauge()
                .value();
    }

    private double oldestAge(String q) {
        return registry.get("locksmith.jobs.oldest.pending.age")
                .tag("queue", q)
                .gauge()
                .value();
    }

    @Test
    void gaugesEqualTheKnownDepthAndAreMeasuredOncePerQueueAndInterval() {
        queue.enqueueAll(dsl, Collections.nCopies(7, NewJob.of("deep", "k")));
        queue.enqueueAll(
                dsl,
                Collections.nCopies(
                        2,
                        NewJob.builder("deep", "k").delay(Duration.ofHours(1)).build()));
        assertThat(queue.claim("deep", 3, Duration.ofMinutes(5), "w")).hasSize(3);
        // the four due pending jobs have been due for 90 s
        dsl.execute("UPDATE locksmith.jobs SET run_at = now() - interval '90 seconds' "
                + "WHERE queue = 'deep' AND status = 'pending' AND run_at <= now()");
        QueueDepthMetrics metrics = QueueDepthMetrics.builder(new JobQueue(counting.dsl()), List.of("deep", "idle"))
                .refreshInterval(INTERVAL)
                .build();
        metrics.bindTo(registry);
        assertThat(counting.statements()).isZero(); // nothing is measured before a gauge is read

        assertThat(depth("deep", "pending")).isEqualTo(6); // 4 due, 2 delayed
        assertThat(depth("deep", "running")).isEqualTo(3);
        assertThat(oldestAge("deep")).isBetween(90.0, 150.0); // database clock: 90 s and the test's own time
        assertThat(depth("idle", "pending")).isZero();
        assertThat(depth("idle", "running")).isZero();
        assertThat(oldestAge("idle")).isZero(); // documented: 0 when no pending job is due
        assertThat(counting.statements()).isEqualTo(2); // one per queue for its three gauges

        queue.enqueueAll(dsl, Collections.nCopies(5, NewJob.of("deep", "k")));
        clock.add(INTERVAL.minusMillis(1));
        assertThat(depth("deep", "pending")).isEqualTo(6); // not measured again within the interval
        assertThat(depth("idle", "pending")).isZero();
        assertThat(counting.statements()).isEqualTo(2);

        clock.add(Duration.ofMillis(1));
        assertThat(depth("deep", "pending")).isEqualTo(11);
        assertThat(depth("deep", "running")).isEqualTo(3);
        assertThat(counting.statements()).isEqualTo(3); // only the queue whose gauge was read
        assertThat(depth("idle", "pending")).isZero();
        assertThat(counting.statements()).isEqualTo(4);

        metrics.close();
        assertThat(registry.find("locksmith.jobs.depth").gauges()).isEmpty();
        assertThat(registry.find("locksmith.jobs.oldest.pending.age").gauges()).isEmpty();
    }

    @Test
    void countsStopAtTheCap() {
        queue.enqueueAll(dsl, Collections.nCopies(7, NewJob.of("capped", "k")));
        QueueDepthMetrics.builder(new JobQueue(dsl), List.of("capped"))
                .cap(5)
                .build()
                .bindTo(registry);
        assertThat(depth("capped", "pending")).isEqualTo(5);
        assertThat(depth("capped", "running")).isZero();
    }

    @Test
    void aFailedMeasurementKeepsTheLastValuesLogsAWarningWithTheCauseAndIsRetriedAfterTheInterval() {
        Logger log = (Logger) LoggerFactory.getLogger(QueueDepthMetrics.class);
        ListAppender<ILoggingEvent> warnings = new ListAppender<>();
        warnings.start();
        log.addAppender(warnings);
        try {
            queue.enqueueAll(dsl, Collections.nCopies(2, NewJob.of("flaky", "k")));
            QueueDepthMetrics.builder(new JobQueue(counting.dsl()), List.of("flaky"))
                    .refreshInterval(INTERVAL)
                    .build()
                    .bindTo(registry);
            assertThat(depth("flaky", "pending")).isEqualTo(2);

            counting.failing(true);
            queue.enqueue(dsl, NewJob.of("flaky", "k"));
            clock.add(INTERVAL);
            assertThat(depth("flaky", "pending")).isEqualTo(2); // the last value, no exception
            assertThat(depth("flaky", "running")).isZero();
            assertThat(oldestAge("flaky")).isGreaterThanOrEqualTo(0.0);
            assertThat(counting.statements()).isEqualTo(2); // one failed try, not one per gauge
            assertThat(warnings.list).singleElement().satisfies(event -> {
                assertThat(event.getLevel()).isEqualTo(Level.WARN);
                assertThat(event.getFormattedMessage()).contains("the depth of queue flaky");
                assertThat(event.getThrowableProxy().getMessage()).contains("scripted failure");
            });

            counting.failing(false);
            clock.add(INTERVAL);
            assertThat(depth("flaky", "pending")).isEqualTo(3);
            assertThat(counting.statements()).isEqualTo(3);
        } finally {
            log.detachAppender(warnings);
        }
    }

    @Test
    void theBuilderNamesTheSettingItRefuses() {
        JobQueue any = new JobQueue(dsl);
        assertThatThrownBy(() -> QueueDepthMetrics.builder(any, List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("queues");
        assertThatThrownBy(() -> QueueDepthMetrics.builder(any, List.of(" "))).hasMessageContaining("queues");
        assertThatThrownBy(() -> QueueDepthMetrics.builder(any, List.of("q")).cap(0))
                .hasMessageContaining("cap");
        assertThatThrownBy(() -> QueueDepthMetrics.builder(any, List.of("q")).refreshInterval(Duration.ZERO))
                .hasMessageContaining("refreshInterval");
        QueueDepthMetrics metrics =
                QueueDepthMetrics.builder(any, List.of("q", "q")).build();
        assertThat(metrics.queues()).containsExactly("q");
        assertThat(metrics.refreshInterval()).isEqualTo(QueueDepthMetrics.DEFAULT_REFRESH_INTERVAL);
        assertThat(metrics.cap()).isEqualTo(QueueDepthMetrics.DEFAULT_CAP);
        metrics.bindTo(registry);
        metrics.bindTo(registry); // the same registry again: nothing registered twice
        assertThat(registry.find("locksmith.jobs.depth").gauges()).hasSize(2);
        assertThatThrownBy(() -> metrics.bindTo(new SimpleMeterRegistry()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("another registry");
    }
}

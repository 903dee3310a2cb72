package dev.locksmith.it.metrics;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.locksmith.it.support.CountingContext;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.micrometer.QueueDepthMetrics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The opt-in gauge {@code locksmith.jobs.limit.key.held.back}: tagged with the queue and the key
 * for the top keys at a limit of each queue, equal to their known held-back jobs, read at most once
 * per refresh interval (time made to pass with the registry's {@link MockClock}, statements counted
 * on the queue's context), a key that drops below its limit losing its gauge at the next read, and
 * nothing of it when it is off.
 */
class MetricsLimitKeysTest extends DatabaseTest {

    private static final String NAME = "locksmith.jobs.limit.key.held.back";
    private static final Duration INTERVAL = Duration.ofSeconds(10);

    private JobQueue queue;
    private MockClock clock;
    private SimpleMeterRegistry registry;
    private CountingContext counting;
    private final List<Job> running = new ArrayList<>();

    /**
     * Queue tenants: a (limit 1, 4 held back), b (limit 1, 2), d (limit 1, 1) at their limits, c
     * (limit 2, one running) below it; queue other: x (limit 1, 1 held back).
     */
    @BeforeEach
    void keysAtTheirLimits() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
        queue = new JobQueue(dsl);
        clock = new MockClock();
        registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
        counting = new CountingContext(dsl);
        running.clear();
        // no limits yet: the plain claim takes one job of each key, the only jobs
        for (String key : List.of("a", "b", "c", "d")) {
            enqueue("tenants", key, 1);
        }
        enqueue("other", "x", 1);
        running.addAll(queue.claim("tenants", 10, Duration.ofHours(1), "w"));
        running.addAll(queue.claim("other", 10, Duration.ofHours(1), "w"));
        assertThat(running).hasSize(5);
        queue.concurrencyLimits().setDefault(dsl, "tenants", 1);
        queue.concurrencyLimits().set(dsl, "tenants", "c", 2);
        queue.concurrencyLimits().setDefault(dsl, "other", 1);
        enqueue("tenants", "a", 4);
        enqueue("tenants", "b", 2);
        enqueue("tenants", "c", 3);
        enqueue("tenants", "d", 1);
        enqueue("other", "x", 1);
    }

    private void enqueue(String q, String key, int count) {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            jobs.add(NewJob.builder(q, "work").concurrencyKey(key).build());
        }
        queue.enqueueAll(dsl, jobs);
    }

    private QueueDepthMetrics bound(int keysPerQueue) {
        QueueDepthMetrics metrics = QueueDepthMetrics.builder(new JobQueue(counting.dsl()), List.of("tenants", "other"))
                .refreshInterval(INTERVAL)
                .keysPerQueue(keysPerQueue)
                .build();
        metrics.bindTo(registry);
        return metrics;
    }

    private double keysAtLimit(String q) {
        return registry.get("locksmith.jobs.limit.keys").tag("queue", q).gauge().value();
    }

    /** The per-key gauges of {@code q}: held-back jobs by key. */
    private Map<String, Double> byKey(String q) {
        Map<String, Double> values = new TreeMap<>();
        for (Gauge gauge : registry.find(NAME).tag("queue", q).gauges()) {
            values.put(gauge.getId().getTag("key"), gauge.value());
        }
        return values;
    }

    @Test
    void theTopKeysOfEachQueueHaveAGaugeEqualToTheirHeldBackJobsAndAKeyBelowItsLimitLosesIt() {
        QueueDepthMetrics metrics = bound(2);
        assertThat(metrics.keysPerQueue()).isEqualTo(2);
        assertThat(registry.find(NAME).gauges()).isEmpty(); // no key to tag before the first read
        assertThat(counting.statements()).isZero();

        assertThat(keysAtLimit("tenants")).isEqualTo(3);
        assertThat(counting.statements()).isEqualTo(2); // the queue's figures and its top keys
        // a and b hold back the most; d (1) is third, c is below its limit
        assertThat(byKey("tenants")).containsExactly(Map.entry("a", 4.0), Map.entry("b", 2.0));
        assertThat(byKey("other")).isEmpty(); // not read yet
        assertThat(keysAtLimit("other")).isEqualTo(1);
        assertThat(byKey("other")).containsExactly(Map.entry("x", 1.0));
        assertThat(counting.statements()).isEqualTo(4);

        // a's running job completes: a drops below its limit; b gets one more job
        Job a = running.stream()
                .filter(job -> job.concurrencyKey().equals("a"))
                .findFirst()
                .orElseThrow();
        assertThat(queue.complete(dsl, a)).isTrue();
        enqueue("tenants", "b", 1);
        clock.add(INTERVAL.minusMillis(1));
        assertThat(byKey("tenants")).containsExactly(Map.entry("a", 4.0), Map.entry("b", 2.0));
        assertThat(keysAtLimit("tenants")).isEqualTo(3);
        assertThat(counting.statements()).isEqualTo(4); // not read again within the interval

        clock.add(Duration.ofMillis(1));
        assertThat(keysAtLimit("tenants")).isEqualTo(2);
        assertThat(counting.statements()).isEqualTo(6);
        assertThat(byKey("tenants")).containsExactly(Map.entry("b", 3.0), Map.entry("d", 1.0));
        assertThat(registry.find(NAME).tags("queue", "tenants", "key", "a").gauge())
                .isNull();
        assertThat(byKey("other")).containsExactly(Map.entry("x", 1.0));
        // reading other's key gauge read other's top keys again, and not its per-queue figures
        assertThat(counting.statements()).isEqualTo(7);

        metrics.close();
        assertThat(registry.find(NAME).gauges()).isEmpty();
        assertThat(registry.find("locksmith.jobs.limit.keys").gauges()).isEmpty();
    }

    @Test
    void offByDefaultNoKeyIsTaggedAndNoStatementRunsForThem() {
        QueueDepthMetrics metrics = QueueDepthMetrics.builder(new JobQueue(counting.dsl()), List.of("tenants"))
                .build();
        metrics.bindTo(registry);
        assertThat(metrics.keysPerQueue()).isZero();
        assertThat(keysAtLimit("tenants")).isEqualTo(3);
        assertThat(counting.statements()).isEqualTo(1);
        assertThat(registry.find(NAME).gauges()).isEmpty();
    }

    @Test
    void aFailedReadKeepsTheLastKeysWithoutThrowingAndIsLoggedWithItsCause() {
        Logger log = (Logger) LoggerFactory.getLogger(QueueDepthMetrics.class);
        ListAppender<ILoggingEvent> warnings = new ListAppender<>();
        warnings.start();
        log.addAppender(warnings);
        try {
            bound(3);
            assertThat(keysAtLimit("tenants")).isEqualTo(3);
            assertThat(byKey("tenants")).containsExactly(Map.entry("a", 4.0), Map.entry("b", 2.0), Map.entry("d", 1.0));

            counting.failing(true);
            clock.add(INTERVAL);
            assertThat(keysAtLimit("tenants")).isEqualTo(3); // the last value, no exception
            assertThat(byKey("tenants")).containsExactly(Map.entry("a", 4.0), Map.entry("b", 2.0), Map.entry("d", 1.0));
            assertThat(counting.statements()).isEqualTo(4); // one failed try of each, not one per gauge
            assertThat(warnings.list)
                    .filteredOn(event -> event.getFormattedMessage().contains("the keys of queue tenants"))
                    .singleElement()
                    .satisfies(event -> {
                        assertThat(event.getLevel()).isEqualTo(Level.WARN);
                        assertThat(event.getThrowableProxy().getMessage()).contains("scripted failure");
                    });

            counting.failing(false);
            queue.concurrencyLimits().setDefault(dsl, "tenants", 5); // every key below its limit
            clock.add(INTERVAL);
            assertThat(keysAtLimit("tenants")).isZero();
            assertThat(byKey("tenants")).isEmpty();
        } finally {
            log.detachAppender(warnings);
        }
    }

    @Test
    void keysPerQueueIsRefusedOutOfRange() {
        JobQueue any = new JobQueue(dsl);
        assertThatThrownBy(() -> QueueDepthMetrics.builder(any, List.of("q")).keysPerQueue(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("keysPerQueue must be between 0 and 100, was -1");
        assertThatThrownBy(() -> QueueDepthMetrics.builder(any, List.of("q"))
                        .keysPerQueue(QueueDepthMetrics.MAX_KEYS_PER_QUEUE + 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("keysPerQueue must be between 0 and 100, was 101");
        assertThat(QueueDepthMetrics.builder(any, List.of("q"))
                        .keysPerQueue(100)
                        .build()
                        .keysPerQueue())
                .isEqualTo(100);
    }
}

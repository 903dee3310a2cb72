package dev.locksmith.it.metrics;

import static dev.locksmith.codegen.Tables.JOBS;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.micrometer.LocksmithMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;

/**
 * A database test whose repositories report to a fresh {@link LocksmithMetrics} per test, bound
 * to a {@link SimpleMeterRegistry}: {@link #observed} carries it, {@link #dsl} does not (set-up
 * and checks through it are not counted).
 */
abstract class MetricsDatabaseTest extends DatabaseTest {

    protected SimpleMeterRegistry registry;
    protected LocksmithMetrics metrics;
    protected DSLContext observed;

    @BeforeEach
    void freshMetrics() {
        registry = new SimpleMeterRegistry();
        metrics = new LocksmithMetrics();
        metrics.bindTo(registry);
        observed = Locksmith.builder(dsl).observer(metrics).build().dsl();
    }

    /** The sum of the counters named {@code name} that carry {@code tags} (key, value, ...); 0 when there is none. */
    protected double counted(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream()
                .mapToDouble(Counter::count)
                .sum();
    }

    /** The number of events of the timers named {@code name} that carry {@code tags}; 0 when there is none. */
    protected long timed(String name, String... tags) {
        return registry.find(name).tags(tags).timers().stream()
                .mapToLong(Timer::count)
                .sum();
    }

    /** Waits (on the database, up to 60 s) until no job matches {@code condition}. */
    protected void awaitNoJob(Condition condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (dsl.fetchCount(JOBS, condition) > 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("jobs still matching " + condition + " after 60 s");
            }
            dsl.execute("SELECT pg_sleep(0.02)");
        }
    }
}

package dev.locksmith.it.metrics;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.micrometer.LocksmithMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What LocksmithMetrics records before and after it is bound, and to which registries it binds. */
class MetricsBindingTest extends DatabaseTest {

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
    }

    @Test
    void nothingIsRecordedBeforeBindingAndEverythingAfter() {
        LocksmithMetrics metrics = new LocksmithMetrics();
        JobQueue queue =
                new JobQueue(Locksmith.builder(dsl).observer(metrics).build().dsl());
        queue.enqueue(dsl, NewJob.of("early", "k"));
        assertThat(queue.claim("early", 1, Duration.ofMinutes(1), "w")).hasSize(1);

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        metrics.bindTo(registry);
        // the untagged counters exist from binding on, at zero
        assertThat(registry.get("locksmith.locks.deadlocks").counter().count()).isZero();
        assertThat(registry.get("locksmith.locks.timeouts").counter().count()).isZero();
        assertThat(registry.get("locksmith.pool.acquire.timeouts").counter().count())
                .isZero();
        assertThat(registry.find("locksmith.jobs.inserted").counters()).isEmpty();
        assertThat(registry.find("locksmith.jobs.claim").timers()).isEmpty();

        queue.enqueue(dsl, NewJob.of("early", "k"));
        assertThat(queue.claim("early", 1, Duration.ofMinutes(1), "w")).hasSize(1);
        assertThat(registry.get("locksmith.jobs.inserted")
                        .tags("queue", "early", "kind", "k")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("locksmith.jobs.claimed")
                        .tags("queue", "early", "kind", "k")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("locksmith.jobs.claim")
                        .tags("queue", "early", "outcome", "ok")
                        .timer()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void itBindsToOneRegistry() {
        LocksmithMetrics metrics = new LocksmithMetrics();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        metrics.bindTo(registry);
        metrics.bindTo(registry);
        assertThat(registry.getMeters()).hasSize(3);
        assertThatThrownBy(() -> metrics.bindTo(new SimpleMeterRegistry()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("CompositeMeterRegistry");
    }
}

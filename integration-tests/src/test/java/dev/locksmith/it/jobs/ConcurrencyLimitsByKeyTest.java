package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;
import static dev.locksmith.codegen.Tables.JOB_KEY_STARTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.it.support.CountingContext;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.ConcurrencyLimits.KeyHeldBack;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ConcurrencyLimits#heldBackByKey} on known keys: two at their concurrency limit holding
 * back 5 jobs each, one holding back 3 (and a delayed job, not counted), one whose window of starts
 * is full (running none), one below its limit and one without a limit, which are not listed. The
 * order, the counts, the cap, the bound on keys, a key that drops below its limit, and bad input.
 */
class ConcurrencyLimitsByKeyTest extends DatabaseTest {

    private static final String QUEUE = "by-key";

    private JobQueue queue;
    private ConcurrencyLimits limits;
    private final List<Job> running = new ArrayList<>();

    @BeforeEach
    void keysAtTheirLimitsAndBelow() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
        dsl.deleteFrom(JOB_KEY_STARTS).execute();
        queue = new JobQueue(dsl);
        limits = queue.concurrencyLimits();
        running.clear();
        // no limit yet: the plain claim takes these six, the only jobs, whatever their key
        enqueue("a", 2);
        enqueue("b", 1);
        enqueue("c", 1);
        enqueue("d", 1);
        enqueue("f", 1);
        running.addAll(queue.claim(QUEUE, 10, Duration.ofHours(1), "w"));
        assertThat(running).hasSize(6);
        // e starts one job under a rate of one an hour, which then completes: its window is full
        queue.rateLimits().set(dsl, QUEUE, "e", 1, Duration.ofHours(1));
        enqueue("e", 1);
        List<Job> started = queue.claim(QUEUE, 10, Duration.ofHours(1), "w");
        assertThat(started).extracting(Job::concurrencyKey).containsExactly("e");
        assertThat(queue.complete(dsl, started.get(0))).isTrue();

        limits.set(dsl, QUEUE, "a", 2);
        limits.set(dsl, QUEUE, "b", 1);
        limits.set(dsl, QUEUE, "c", 3);
        limits.set(dsl, QUEUE, "d", 1);
        enqueue("a", 5);
        enqueue("b", 3);
        queue.enqueue(
                dsl,
                NewJob.builder(QUEUE, "work")
                        .concurrencyKey("b")
                        .delay(Duration.ofHours(1))
                        .build());
        enqueue("c", 4);
        enqueue("d", 5);
        enqueue("e", 2);
        enqueue("f", 9); // no limit at all
    }

    private void enqueue(String key, int count) {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            jobs.add(NewJob.builder(QUEUE, "work").concurrencyKey(key).build());
        }
        queue.enqueueAll(dsl, jobs);
    }

    @Test
    void theKeysAtALimitMostHeldBackFirstTiesByKey() {
        assertThat(limits.heldBackByKey(QUEUE, 100, 1000))
                .containsExactly(
                        new KeyHeldBack("a", 2, 5),
                        new KeyHeldBack("d", 1, 5),
                        new KeyHeldBack("b", 1, 3), // its delayed job is not held back by the limit
                        new KeyHeldBack("e", 0, 2)); // the full window: running none
        // the same keys and jobs as the per-queue figures
        assertThat(limits.heldBack(QUEUE, 1000)).isEqualTo(new ConcurrencyLimits.HeldBack(4, 15, 1000));
    }

    @Test
    void atMostKeysAreListed() {
        assertThat(limits.heldBackByKey(QUEUE, 2, 1000))
                .containsExactly(new KeyHeldBack("a", 2, 5), new KeyHeldBack("d", 1, 5));
        assertThat(limits.heldBackByKey(QUEUE, 1, 1000)).containsExactly(new KeyHeldBack("a", 2, 5));
    }

    @Test
    void eachKeysJobsAreCountedUpToTheCap() {
        assertThat(limits.heldBackByKey(QUEUE, 100, 4))
                .containsExactly(
                        new KeyHeldBack("a", 2, 4),
                        new KeyHeldBack("d", 1, 4),
                        new KeyHeldBack("b", 1, 3),
                        new KeyHeldBack("e", 0, 2));
        assertThat(limits.heldBackByKey(QUEUE, 100, 1))
                .extracting(KeyHeldBack::jobsHeldBack)
                .containsExactly(1, 1, 1, 1);
    }

    @Test
    void aKeyBelowItsLimitIsNotListedAndALoweredLimitCountsTheJobsAlreadyRunning() {
        Job b = running.stream()
                .filter(job -> job.concurrencyKey().equals("b"))
                .findFirst()
                .orElseThrow();
        assertThat(queue.complete(dsl, b)).isTrue();
        limits.set(dsl, QUEUE, "c", 1); // one running: now at its limit
        limits.set(dsl, QUEUE, "a", 1); // two running, above its new limit
        assertThat(limits.heldBackByKey(QUEUE, 100, 1000))
                .containsExactly(
                        new KeyHeldBack("a", 2, 5),
                        new KeyHeldBack("d", 1, 5),
                        new KeyHeldBack("c", 1, 4),
                        new KeyHeldBack("e", 0, 2));
    }

    @Test
    void aQueueWithNoKeyAtALimitListsNone() {
        assertThat(limits.heldBackByKey("idle", 100, 1000)).isEmpty();
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
        assertThat(limits.heldBackByKey(QUEUE, 100, 1000)).isEmpty();
    }

    @Test
    void badInputIsRefusedBeforeAnyStatementRuns() {
        CountingContext counting = new CountingContext(dsl);
        ConcurrencyLimits counted = new JobQueue(counting.dsl()).concurrencyLimits();
        assertThatThrownBy(() -> counted.heldBackByKey(QUEUE, 0, 1000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("keys must be between 1 and 100, was 0");
        assertThatThrownBy(() -> counted.heldBackByKey(QUEUE, ConcurrencyLimits.MAX_KEYS_LISTED + 1, 1000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("keys must be between 1 and 100, was 101");
        assertThatThrownBy(() -> counted.heldBackByKey(QUEUE, 10, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cap must be between 1 and 1000000, was 0");
        assertThatThrownBy(() -> counted.heldBackByKey(QUEUE, 10, 1_000_001))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cap");
        assertThatThrownBy(() -> counted.heldBackByKey(" ", 10, 1000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("queue");
        assertThatThrownBy(() -> counted.heldBackByKey("q".repeat(129), 10, 1000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("queue");
        assertThatThrownBy(() -> counted.heldBackByKey(null, 10, 1000)).isInstanceOf(NullPointerException.class);
        assertThat(counting.statements()).isZero();
        assertThatThrownBy(() -> new KeyHeldBack("a", -1, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}

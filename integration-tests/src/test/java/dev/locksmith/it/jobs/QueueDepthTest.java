package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.QueueDepth;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link JobQueue#depth}: exact below the cap, saturating at it, oldest due job across priorities. */
class QueueDepthTest extends DatabaseTest {

    private JobQueue queue;

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(dsl);
    }

    /** Sets the run_at of job {@code id} to {@code ago} before now, on the database clock. */
    private void dueSince(long id, Duration ago) {
        dsl.execute(
                "UPDATE locksmith.jobs SET run_at = now() - make_interval(secs => ?) WHERE id = ?",
                (double) ago.toSeconds(),
                id);
    }

    @Test
    void countsPendingAndRunningAndFindsTheOldestDueJobWhateverItsPriority() {
        long urgent =
                queue.enqueue(dsl, NewJob.builder("depth", "k").priority(1).build());
        long lazyOld =
                queue.enqueue(dsl, NewJob.builder("depth", "k").priority(900).build());
        queue.enqueue(dsl, NewJob.builder("depth", "k").priority(900).build());
        queue.enqueue(
                dsl, NewJob.builder("depth", "k").delay(Duration.ofHours(1)).build()); // not due
        queue.enqueue(dsl, NewJob.of("other", "k")); // another queue
        dueSince(urgent, Duration.ofSeconds(10));
        // the oldest due job has the lowest priority: a look at the head of the queue would miss it
        dueSince(lazyOld, Duration.ofSeconds(600));
        queue.claim("depth", 1, Duration.ofMinutes(5), "w"); // leases the urgent one

        QueueDepth depth = queue.depth("depth", 1000);

        assertThat(depth.pending()).isEqualTo(3);
        assertThat(depth.running()).isEqualTo(1);
        assertThat(depth.cap()).isEqualTo(1000);
        assertThat(depth.oldestDuePendingAge())
                .get()
                .satisfies(age -> assertThat(age).isBetween(Duration.ofSeconds(600), Duration.ofSeconds(660)));
    }

    @Test
    void stopsCountingAtTheCapAndReportsNoAgeForAnEmptyQueue() {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            jobs.add(NewJob.of("deep", "k"));
        }
        queue.enqueueAll(dsl, jobs);

        assertThat(queue.depth("deep", 10).pending()).isEqualTo(10);
        assertThat(queue.depth("deep", 25).pending()).isEqualTo(25);
        QueueDepth empty = queue.depth("nothing-here", 10);
        assertThat(empty.pending()).isZero();
        assertThat(empty.running()).isZero();
        assertThat(empty.oldestDuePendingAge()).isEmpty();
    }

    @Test
    void refusesBadInput() {
        assertThatThrownBy(() -> queue.depth("", 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> queue.depth("q", 0)).hasMessageContaining("cap");
        assertThatThrownBy(() -> queue.depth("q", 1_000_001)).hasMessageContaining("cap");
    }
}

package dev.locksmith.it;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Locksmith;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jooq.DSLContext;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An observer that throws from every method fails no operation and keeps no other observer of
 * {@link LocksmithObserver#all} from being told; with no observer, nothing is reported.
 */
class ObserverSafetyTest extends DatabaseTest {

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
    }

    /** Throws from everything, including the observation it hands out. */
    private static final class Throwing implements LocksmithObserver {
        @Override
        public Observation start(Operation operation) {
            return new Observation() {
                @Override
                public void end(Outcome outcome) {
                    throw new IllegalStateException("end");
                }

                @Override
                public void error(Throwable error) {
                    throw new IllegalStateException("error");
                }
            };
        }

        @Override
        public void jobsEnqueued(String queue, String kind, int count) {
            throw new IllegalStateException("enqueued");
        }

        @Override
        public void jobEvent(JobEvent event, Job job) {
            throw new IllegalStateException("event");
        }

        @Override
        public void retried(int failedAttempts, LocksmithException failure) {
            throw new IllegalStateException("retried");
        }

        @Override
        public @Nullable String traceparent() {
            throw new IllegalStateException("traceparent");
        }
    }

    /** Writes down what it is told. */
    private static final class Recording implements LocksmithObserver {
        final List<String> seen = new CopyOnWriteArrayList<>();

        @Override
        public Observation start(Operation operation) {
            seen.add("start " + operation.name());
            return new Observation() {
                @Override
                public void end(Outcome outcome) {
                    seen.add("end " + operation.name() + " " + outcome.tag());
                }

                @Override
                public void error(Throwable error) {
                    seen.add("error " + operation.name());
                }
            };
        }

        @Override
        public void jobsEnqueued(String queue, String kind, int count) {
            seen.add("enqueued " + queue + " " + kind + " " + count);
        }

        @Override
        public void jobEvent(JobEvent event, Job job) {
            seen.add("event " + event.tag());
        }
    }

    @Test
    void aThrowingObserverFailsNothingAndTheNextObserverIsStillTold() {
        Recording recording = new Recording();
        JobQueue queue = new JobQueue(Locksmith.builder(dsl)
                .observer(LocksmithObserver.all(new Throwing(), recording))
                .build()
                .dsl());

        queue.enqueueAll(dsl, List.of(NewJob.of("safe", "k"), NewJob.of("safe", "k")));
        List<Job> claimed = queue.claim("safe", 10, Duration.ofMinutes(1), "w");
        int completed = dsl.transactionResult(c -> queue.completeAll(c.dsl(), claimed));

        assertThat(completed).isEqualTo(2);
        assertThat(dsl.fetchCount(JOBS)).isZero();
        assertThat(dsl.fetchCount(JOBS, JOBS.TRACEPARENT.isNotNull())).isZero();
        assertThat(recording.seen)
                .containsExactly(
                        "enqueued safe k 2",
                        "start locksmith.job.claim",
                        "end locksmith.job.claim ok",
                        "event claimed",
                        "event claimed",
                        "start locksmith.job.complete",
                        "end locksmith.job.complete ok",
                        "event completed",
                        "event completed");
    }

    @Test
    void usingNoneReplacesAnObserverAndNothingIsReported() {
        Recording recording = new Recording();
        DSLContext observed = Locksmith.builder(dsl).observer(recording).build().dsl();
        DSLContext unobserved = Locksmith.builder(observed)
                .observer(LocksmithObserver.NONE)
                .build()
                .dsl();
        JobQueue queue = new JobQueue(unobserved);

        queue.enqueue(dsl, NewJob.of("quiet", "k"));
        List<Job> claimed = queue.claim("quiet", 1, Duration.ofMinutes(1), "w");
        dsl.transaction(c -> queue.complete(c.dsl(), claimed.get(0)));

        assertThat(Locksmith.of(observed).observer()).isSameAs(recording);
        assertThat(Locksmith.of(unobserved).observer()).isSameAs(LocksmithObserver.NONE);
        assertThat(claimed).hasSize(1);
        assertThat(recording.seen).isEmpty();
    }
}

package dev.locksmith.observe;

import dev.locksmith.exception.LocksmithException;
import dev.locksmith.jobs.Job;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link LocksmithObserver#all}: forwards every call to each observer; one that throws does not
 * keep the others from being told (what it threw is logged at DEBUG).
 */
record Composite(List<LocksmithObserver> observers) implements LocksmithObserver {

    private static final Logger LOG = LoggerFactory.getLogger("dev.locksmith.observe");

    private static <T> void each(List<T> targets, Consumer<T> call) {
        for (T target : targets) {
            try {
                call.accept(target);
            } catch (RuntimeException e) {
                LOG.debug("a LocksmithObserver threw; ignored", e);
            }
        }
    }

    @Override
    public Observation start(Operation operation) {
        List<Observation> started = new ArrayList<>(observers.size());
        each(observers, o -> started.add(o.start(operation)));
        return new Observation() {
            @Override
            public void end(Outcome outcome) {
                each(started, s -> s.end(outcome));
            }

            @Override
            public void error(Throwable error) {
                each(started, s -> s.error(error));
            }

            @Override
            public @Nullable String traceparent() {
                for (Observation s : started) {
                    try {
                        String traceparent = s.traceparent();
                        if (traceparent != null) {
                            return traceparent;
                        }
                    } catch (RuntimeException e) {
                        LOG.debug("a LocksmithObserver threw; ignored", e);
                    }
                }
                return null;
            }
        };
    }

    @Override
    public void jobsEnqueued(String queue, String kind, int count) {
        each(observers, o -> o.jobsEnqueued(queue, kind, count));
    }

    @Override
    public void jobEvent(JobEvent event, Job job) {
        each(observers, o -> o.jobEvent(event, job));
    }

    @Override
    public void workerEvent(WorkerEvent event, String queue) {
        each(observers, o -> o.workerEvent(event, queue));
    }

    @Override
    public void jobsRescued(String queue, int toPending, int toFailed) {
        each(observers, o -> o.jobsRescued(queue, toPending, toFailed));
    }

    @Override
    public void retried(int failedAttempts, LocksmithException failure) {
        each(observers, o -> o.retried(failedAttempts, failure));
    }

    @Override
    public void lockFailed(LocksmithException failure) {
        each(observers, o -> o.lockFailed(failure));
    }

    @Override
    public @Nullable String traceparent() {
        for (LocksmithObserver o : observers) {
            try {
                String traceparent = o.traceparent();
                if (traceparent != null) {
                    return traceparent;
                }
            } catch (RuntimeException e) {
                LOG.debug("a LocksmithObserver threw; ignored", e);
            }
        }
        return null;
    }
}

package dev.locksmith.observe;

import dev.locksmith.LocksmithException;
import dev.locksmith.jobs.Job;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** {@link LocksmithObserver#all}: forwards every call to each observer. */
record Composite(List<LocksmithObserver> observers) implements LocksmithObserver {

    static final String KEY = LocksmithObserver.class.getName();

    @Override
    public Observation start(Operation operation) {
        List<Observation> started = new ArrayList<>(observers.size());
        for (LocksmithObserver o : observers) {
            started.add(o.start(operation));
        }
        return new Observation() {
            @Override
            public void end(Outcome outcome) {
                started.forEach(s -> s.end(outcome));
            }

            @Override
            public void error(Throwable error) {
                started.forEach(s -> s.error(error));
            }
        };
    }

    @Override
    public void jobsEnqueued(String queue, String kind, int count) {
        observers.forEach(o -> o.jobsEnqueued(queue, kind, count));
    }

    @Override
    public void jobEvent(JobEvent event, Job job) {
        observers.forEach(o -> o.jobEvent(event, job));
    }

    @Override
    public void jobsRescued(String queue, int toPending, int toFailed) {
        observers.forEach(o -> o.jobsRescued(queue, toPending, toFailed));
    }

    @Override
    public void retried(int failedAttempts, LocksmithException failure) {
        observers.forEach(o -> o.retried(failedAttempts, failure));
    }

    @Override
    public void lockFailed(LocksmithException failure) {
        observers.forEach(o -> o.lockFailed(failure));
    }

    @Override
    public @Nullable String traceparent() {
        for (LocksmithObserver o : observers) {
            String traceparent = o.traceparent();
            if (traceparent != null) {
                return traceparent;
            }
        }
        return null;
    }
}

package dev.locksmith.jobs;

import dev.locksmith.jobs.runtime.WorkerRuntime;

/**
 * What the three workers share: each is the one {@link WorkerRuntime} with its mode, and answers
 * the {@link Worker} questions from it.
 */
abstract class RuntimeWorker implements Worker {

    final WorkerRuntime runtime;
    private final String queue;
    private final String workerId;

    RuntimeWorker(WorkerBuilder<?> builder, WorkerRuntime runtime) {
        this.runtime = runtime;
        this.queue = builder.queue;
        this.workerId = builder.workerId();
    }

    @Override
    public void close() {
        runtime.close();
    }

    @Override
    public String queue() {
        return queue;
    }

    @Override
    public String workerId() {
        return workerId;
    }

    @Override
    public int liveThreads() {
        return runtime.liveThreads();
    }

    @Override
    public long processed() {
        return runtime.processed();
    }
}

package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.Job;
import org.jspecify.annotations.Nullable;

/** A lease a leased worker holds, and what its handler is doing. */
final class HeldJob {

    final Job job;
    /** From the start of the handler's run until it ends, however it ends. */
    volatile boolean handlerRunning;
    /** From just before the completing statement: the row may be gone for a good reason. */
    volatile boolean completing;
    /** A completion statement that may have settled it failed (its outcome is unknown). */
    volatile boolean uncertain;
    /** The handler run's trace context, for the batched completion's span to link to; null if none. */
    volatile @Nullable String handlerTrace;

    HeldJob(Job job) {
        this.job = job;
    }
}

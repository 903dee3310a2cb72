package com.example.encapsulation;

import dev.locksmith.jobs.JobQueue;
import dev.locksmith.internal.Errors;

/** Uses the API (fine) and an internal class (refused: core does not export the package). */
public final class ReachesIn {

    private ReachesIn() {
    }

    public static Object reach() {
        return JobQueue.CHANNEL + Errors.class.getName();
    }
}

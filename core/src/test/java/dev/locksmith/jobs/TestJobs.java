package dev.locksmith.jobs;

import dev.locksmith.jobs.engine.JobRow;

/**
 * Jobs for unit tests that run without a database: a {@link Job} is a value only the queue makes,
 * so this reaches its package-private constructor from the test sources, in its package. Not API.
 */
public final class TestJobs {

    private TestJobs() {}

    /** The job of {@code row}. */
    public static Job of(JobRow row) {
        return new Job(row);
    }
}

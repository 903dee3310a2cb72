package dev.locksmith.jobs;

import dev.locksmith.internal.Observing;
import dev.locksmith.jobs.engine.Generations;
import dev.locksmith.jobs.engine.QueueEngine;
import org.jooq.DSLContext;

/**
 * Reaches the engine's {@link Generations} from the tests of other packages, so that a test can
 * turn the jobs table's generations one step at a time, as a worker's maintenance thread does
 * every 250 ms. Not API: it lives in the test sources, in the queue's package.
 */
public final class GenerationSeams {

    private GenerationSeams() {}

    /** {@return the generations of the jobs table {@code dsl} reaches} */
    public static Generations on(DSLContext dsl) {
        return new QueueEngine(dsl, JobQueueConfig.defaults(), Observing.of(dsl), Job::new).generations;
    }
}

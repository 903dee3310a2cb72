package dev.locksmith.jobs;

import dev.locksmith.internal.Observing;
import dev.locksmith.jobs.engine.Claims;
import dev.locksmith.jobs.engine.Generations;
import dev.locksmith.jobs.engine.Leases;
import dev.locksmith.jobs.engine.QueueEngine;
import dev.locksmith.jobs.engine.TwoPhaseSteps;
import org.jooq.DSLContext;

/**
 * Reaches the engine's {@link Generations} from the tests of other packages, so that a test can
 * turn the jobs table's generations one step at a time, as a worker's maintenance thread does
 * every 250 ms, and its {@link Leases}, whose heartbeat of many jobs only a worker sends. Not API: it lives in the test sources, in the queue's package.
 */
public final class GenerationSeams {

    private GenerationSeams() {}

    /** {@return the generations of the jobs table {@code dsl} reaches} */
    public static Generations on(DSLContext dsl) {
        return engine(dsl).generations;
    }

    /** {@return the engine's leases, whose heartbeat of many jobs a worker sends} */
    public static Leases leases(DSLContext dsl) {
        return engine(dsl).leases;
    }

    /** {@return the partition of jobs {@code job} was read from, which the statements settling it name} */
    public static short slot(Job job) {
        return job.row().slot();
    }

    /** {@return the engine's claims, among them the two-phase claim that holds a job} */
    public static Claims claims(DSLContext dsl) {
        return engine(dsl).claims;
    }

    /** {@return the steps of a two-phase job after its claim} */
    public static TwoPhaseSteps twoPhase(DSLContext dsl) {
        return engine(dsl).twoPhase;
    }

    private static QueueEngine engine(DSLContext dsl) {
        return new QueueEngine(dsl, JobQueueConfig.defaults(), Observing.of(dsl), Job::new, Job::row);
    }
}

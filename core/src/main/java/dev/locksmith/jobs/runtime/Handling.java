package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.FailResult;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Outcome;
import org.jspecify.annotations.Nullable;

/** How a handler's observation ends after it threw. */
final class Handling {

    private Handling() {}

    /**
     * Ends a job's handling observation after its handler threw: with the outcome of a snooze or a
     * cancellation, which are not errors, and as an error otherwise.
     */
    static void end(Observation handling, Throwable error, @Nullable FailResult result) {
        if (result != null && result.outcome() == FailResult.Outcome.SNOOZED) {
            handling.end(Outcome.SNOOZED);
        } else if (result != null && result.outcome() == FailResult.Outcome.CANCELLED) {
            handling.end(Outcome.CANCELLED);
        } else {
            handling.error(error);
        }
    }
}

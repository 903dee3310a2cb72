package dev.locksmith.schedules;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A schedule as stored, with its state, as {@link Schedules#find} and {@link Schedules#list}
 * read it.
 *
 * @param schedule the definition last registered
 * @param nextRunAt the next occurrence a tick will handle: when it is due, the next tick
 *     enqueues it (subject to the misfire policy)
 * @param lastOccurrence the latest occurrence a tick has handled, enqueued or dropped by the
 *     misfire policy; empty before the first. No tick enqueues an occurrence at or before it.
 * @param paused whether ticks leave the schedule alone
 * @param updatedAt when the row last changed: a registration that changed something, a pause,
 *     a resume or a tick (database clock)
 */
public record RegisteredSchedule(
        Schedule schedule, Instant nextRunAt, Optional<Instant> lastOccurrence, boolean paused, Instant updatedAt) {

    /**
     * Checks that no field is null.
     *
     * @param schedule the definition
     * @param nextRunAt the next occurrence
     * @param lastOccurrence the latest occurrence handled, or empty
     * @param paused whether it is paused
     * @param updatedAt when the row last changed
     * @throws NullPointerException when a field is null
     */
    public RegisteredSchedule {
        Objects.requireNonNull(schedule, "schedule");
        Objects.requireNonNull(nextRunAt, "nextRunAt");
        Objects.requireNonNull(lastOccurrence, "lastOccurrence");
        Objects.requireNonNull(updatedAt, "updatedAt");
    }

    /** {@return the schedule's name} */
    public String name() {
        return schedule.name();
    }
}

package dev.locksmith.schedules;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one tick does for one due schedule: which occurrences it enqueues, the latest occurrence
 * it handled, and the schedule's next occurrence. Pure computation, from the row as locked.
 *
 * @param enqueue the occurrences to enqueue, oldest first
 * @param latest the latest due occurrence (handled, whether enqueued or dropped)
 * @param next the first occurrence after now
 */
record Firing(List<Instant> enqueue, Instant latest, Instant next) {

    private static final Logger LOG = LoggerFactory.getLogger(Schedules.class);

    /**
     * Plans the tick of {@code schedule} at {@code now}. The due occurrences are
     * {@code nextRunAt} itself and the trigger's occurrences after it up to {@code now}; none at
     * or before {@code lastOccurrence} is enqueued.
     *
     * @return the plan; empty when the trigger has no occurrence after {@code now}
     */
    static Optional<Firing> plan(
            Schedule schedule,
            Instant nextRunAt,
            @Nullable Instant lastOccurrence,
            Instant now,
            Duration grace,
            int maxCatchUp) {
        Trigger trigger = schedule.trigger();
        Optional<Instant> next = trigger.after(now);
        if (next.isEmpty()) {
            return Optional.empty();
        }
        // Newest first, from now back: at most as many as the policy can enqueue, so a schedule
        // that fires every second and was stopped for a year costs maxCatchUp steps, not millions.
        int limit = schedule.misfire() == MisfirePolicy.RUN_ALL ? maxCatchUp : 1;
        List<Instant> due = new ArrayList<>();
        Optional<Instant> cursor = trigger.atOrBefore(now);
        while (cursor.isPresent() && cursor.get().isAfter(nextRunAt) && due.size() < limit) {
            due.add(cursor.get());
            cursor = trigger.atOrBefore(cursor.get().minusNanos(1));
        }
        boolean capped = due.size() == limit;
        if (!capped) {
            due.add(nextRunAt);
        }
        Instant latest = due.get(0);
        if (lastOccurrence != null) {
            due.removeIf(o -> !o.isAfter(lastOccurrence));
            if (!latest.isAfter(lastOccurrence)) {
                latest = lastOccurrence;
            }
        }
        Collections.reverse(due);
        String name = schedule.name();
        List<Instant> enqueue;
        switch (schedule.misfire()) {
            case RUN_ALL:
                enqueue = due;
                if (capped && !due.isEmpty()) {
                    Instant newestDropped =
                            cursor.filter(c -> c.isAfter(nextRunAt)).orElse(nextRunAt);
                    LOG.warn(
                            "schedule {} has more than {} due occurrences: RUN_ALL enqueues the latest {} ({} to {}) "
                                    + "and drops the older ones, from {} to {}",
                            name,
                            maxCatchUp,
                            due.size(),
                            due.get(0),
                            latest,
                            nextRunAt,
                            newestDropped);
                }
                break;
            case RUN_ONCE:
                enqueue = due;
                if (capped && !due.isEmpty()) {
                    LOG.info(
                            "schedule {} missed its occurrences from {} to before {}: RUN_ONCE enqueues one, for {}",
                            name,
                            nextRunAt,
                            latest,
                            latest);
                }
                break;
            case SKIP:
                boolean onTime = !due.isEmpty() && !latest.isBefore(now.minus(grace));
                enqueue = onTime ? due : List.of();
                if (onTime && capped) {
                    LOG.info(
                            "schedule {} missed its occurrences from {} to before {}: SKIP drops them and enqueues "
                                    + "only the on-time {}",
                            name,
                            nextRunAt,
                            latest,
                            latest);
                } else if (!onTime && !due.isEmpty()) {
                    LOG.info(
                            "schedule {} missed its occurrences from {} to {}: SKIP drops them; next at {}",
                            name,
                            nextRunAt,
                            latest,
                            next.get());
                }
                break;
            default:
                throw new IllegalStateException("unknown misfire policy " + schedule.misfire());
        }
        return Optional.of(new Firing(List.copyOf(enqueue), latest, next.get()));
    }
}

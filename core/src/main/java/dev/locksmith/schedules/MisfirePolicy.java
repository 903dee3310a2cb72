package dev.locksmith.schedules;

import java.util.Locale;

/**
 * What a tick enqueues for a schedule whose occurrences it finds overdue: after downtime, after
 * every scheduler was stopped, or when ticks come less often than occurrences.
 *
 * <p>A tick looks at the due occurrences of a schedule, from its {@code next_run_at} up to now.
 * The latest of them is <em>on time</em> when it is at most the scheduler's
 * {@link SchedulesConfig#misfireGrace() misfire grace} old; every other one is <em>missed</em>.
 * In normal operation a tick finds one occurrence, on time, and every policy enqueues it.
 */
public enum MisfirePolicy {
    /**
     * One job for all of them: the latest due occurrence is enqueued, the earlier ones are
     * dropped. The default: a report or clean-up that missed three runs needs one.
     */
    RUN_ONCE,
    /**
     * One job per due occurrence, oldest first, at most {@link SchedulesConfig#maxCatchUp()}
     * (default 1,000) per tick: beyond that the latest ones are kept, the older ones dropped, and
     * a WARN names the schedule and what was dropped. For work that must happen once per period
     * (one job per hour of data).
     */
    RUN_ALL,
    /**
     * Missed occurrences are dropped: only an on-time occurrence is enqueued, and after downtime
     * the schedule just waits for its next occurrence. For work that is pointless late (a
     * reminder at 09:00).
     */
    SKIP;

    /** {@return the value stored in {@code schedules.misfire}} */
    String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    static MisfirePolicy fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}

package dev.locksmith.it.support;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.SCHEDULES;

import dev.locksmith.jobs.NewJob;
import dev.locksmith.schedules.Schedule;
import dev.locksmith.schedules.Schedules;
import dev.locksmith.schedules.SchedulesConfig;
import dev.locksmith.schedules.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jooq.DSLContext;

/**
 * The schedules of the exactly-once tests and the occurrences they must produce over one minute
 * of simulated time: ten that fire every second (6-field cron), one every 5 s (interval), one
 * every minute (5-field cron); registered at {@link #START}, ticked up to {@link #END}.
 */
public final class Occurrences {

    /** Registration time; the first occurrences are 00:00:01 (every second) and 00:00:05. */
    public static final Instant START = Instant.parse("2026-01-01T00:00:00.500Z");
    /** A tick every 250 ms of simulated time... */
    public static final Duration STEP = Duration.ofMillis(250);
    /** ...for one minute. */
    public static final int STEPS = 240;

    public static final Instant END = START.plus(STEP.multipliedBy(STEPS));

    public static final int EVERY_SECOND = 10;

    private Occurrences() {}

    public static void register(DSLContext dsl) {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(SCHEDULES).execute();
        Schedules schedules = new Schedules(
                dsl, SchedulesConfig.builder().clock(new TestClock(START)).build());
        for (int i = 0; i < EVERY_SECOND; i++) {
            schedules.register(
                    dsl,
                    Schedule.builder(secondly(i), Trigger.cron("* * * * * *", "UTC"), NewJob.of("scheduled", "second"))
                            .build());
        }
        schedules.register(
                dsl,
                Schedule.builder("five-seconds", Trigger.every(Duration.ofSeconds(5)), NewJob.of("scheduled", "five"))
                        .build());
        schedules.register(
                dsl,
                Schedule.builder("minute", Trigger.cron("* * * * *", "UTC"), NewJob.of("scheduled", "minute"))
                        .build());
    }

    public static String secondly(int i) {
        return "second-%02d".formatted(i);
    }

    /** The unique key of every occurrence from {@link #START} (exclusive) to {@link #END}. */
    public static List<String> expectedKeys() {
        List<String> keys = new ArrayList<>();
        for (int s = 1; s <= 60; s++) {
            Instant at = Instant.parse("2026-01-01T00:00:00Z").plusSeconds(s);
            for (int i = 0; i < EVERY_SECOND; i++) {
                keys.add(Schedules.uniqueKey(secondly(i), at));
            }
            if (s % 5 == 0) {
                keys.add(Schedules.uniqueKey("five-seconds", at));
            }
        }
        keys.add(Schedules.uniqueKey("minute", Instant.parse("2026-01-01T00:01:00Z")));
        return keys;
    }

    public static Instant at(int step) {
        return START.plus(STEP.multipliedBy(step));
    }
}

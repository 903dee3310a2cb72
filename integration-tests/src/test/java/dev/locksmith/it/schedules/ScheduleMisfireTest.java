package dev.locksmith.it.schedules;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.SCHEDULES;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.TestClock;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.schedules.MisfirePolicy;
import dev.locksmith.schedules.RegisteredSchedule;
import dev.locksmith.schedules.Schedule;
import dev.locksmith.schedules.Schedules;
import dev.locksmith.schedules.SchedulesConfig;
import dev.locksmith.schedules.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Occurrences missed while no scheduler ran: a simulated 10-minute outage of schedules that fire
 * every minute, under each misfire policy, and the catch-up cap of RUN_ALL.
 */
class ScheduleMisfireTest extends DatabaseTest {

    /** Registered at 12:00:30; the first occurrence is 12:01. */
    private static final Instant T0 = Instant.parse("2026-01-01T12:00:30Z");

    private TestClock clock;
    private Schedules schedules;

    @BeforeEach
    void empty() {
        dsl.deleteFrom(SCHEDULES).execute();
        dsl.deleteFrom(JOBS).execute();
        clock = new TestClock(T0);
        schedules = new Schedules(
                dsl,
                SchedulesConfig.builder()
                        .clock(clock)
                        .misfireGrace(Duration.ofSeconds(10))
                        .build());
    }

    private void register(String name, Trigger trigger, MisfirePolicy policy) {
        schedules.register(
                dsl,
                Schedule.builder(name, trigger, NewJob.of("q", name))
                        .misfire(policy)
                        .build());
    }

    private List<String> keysOf(String name) {
        return dsl.select(JOBS.UNIQUE_KEY)
                .from(JOBS)
                .where(JOBS.KIND.eq(name))
                .orderBy(JOBS.ID)
                .fetch(JOBS.UNIQUE_KEY);
    }

    private static List<String> minutes(String name, int from, int to) {
        List<String> keys = new ArrayList<>();
        for (int m = from; m <= to; m++) {
            keys.add(Schedules.uniqueKey(
                    name, Instant.parse("2026-01-01T12:00:00Z").plus(Duration.ofMinutes(m))));
        }
        return keys;
    }

    @Test
    void aTenMinuteOutageGivesOneJobAllTenOrNoneAndEveryScheduleWaitsForItsNextOccurrence() {
        Trigger everyMinute = Trigger.cron("* * * * *", "UTC");
        register("once", everyMinute, MisfirePolicy.RUN_ONCE);
        register("all", everyMinute, MisfirePolicy.RUN_ALL);
        register("skip", everyMinute, MisfirePolicy.SKIP);
        clock.set(Instant.parse("2026-01-01T12:01:00.3Z"));
        assertThat(schedules.runDue()).isEqualTo(3); // 12:01, on time, for each

        // every scheduler stopped from 12:01:01 to 12:11:30: 12:02 .. 12:11 were missed
        clock.set(Instant.parse("2026-01-01T12:11:30Z"));
        assertThat(schedules.runDue()).isEqualTo(1 + 10 + 0);

        assertThat(keysOf("once"))
                .containsExactly(
                        minutes("once", 1, 1).get(0), minutes("once", 11, 11).get(0));
        assertThat(keysOf("all")).containsExactlyElementsOf(minutes("all", 1, 11));
        assertThat(keysOf("skip")).containsExactlyElementsOf(minutes("skip", 1, 1));
        for (RegisteredSchedule s : schedules.list(dsl)) {
            assertThat(s.nextRunAt()).as(s.name()).isEqualTo(Instant.parse("2026-01-01T12:12:00Z"));
            assertThat(s.nextRunAt()).as(s.name()).isAfter(clock.instant());
            assertThat(s.lastOccurrence()).as(s.name()).contains(Instant.parse("2026-01-01T12:11:00Z"));
        }

        // back to normal: one on-time occurrence each
        clock.set(Instant.parse("2026-01-01T12:12:01Z"));
        assertThat(schedules.runDue()).isEqualTo(3);
    }

    @Test
    void skipStillEnqueuesAnOccurrenceFoundWithinTheGrace() {
        register("skip", Trigger.cron("* * * * *", "UTC"), MisfirePolicy.SKIP);
        clock.set(Instant.parse("2026-01-01T12:11:05Z")); // 12:01 .. 12:10 missed, 12:11 five seconds late
        assertThat(schedules.runDue()).isEqualTo(1);
        assertThat(keysOf("skip")).containsExactlyElementsOf(minutes("skip", 11, 11));
    }

    @Test
    void runAllEnqueuesAtMostTheCapKeepingTheLatestAndSaysSo() {
        Logger logger = (Logger) LoggerFactory.getLogger(Schedules.class);
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        logger.addAppender(log);
        try {
            register("seconds", Trigger.cron("* * * * * *", "UTC"), MisfirePolicy.RUN_ALL);
            // first occurrence 12:00:31; 2,000 s later 2,000 are due
            clock.set(T0.plusSeconds(2000));
            assertThat(schedules.runDue()).isEqualTo(1000);

            List<String> keys = keysOf("seconds");
            assertThat(keys).hasSize(1000).doesNotHaveDuplicates();
            assertThat(keys.get(0)).isEqualTo(Schedules.uniqueKey("seconds", T0.plusSeconds(1001)));
            assertThat(keys.get(999)).isEqualTo(Schedules.uniqueKey("seconds", T0.plusSeconds(2000)));
            assertThat(log.list)
                    .filteredOn(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
                    .singleElement()
                    .satisfies(e -> assertThat(e.getFormattedMessage())
                            .contains("schedule seconds has more than 1000 due occurrences")
                            .contains("drops the older ones, from 2026-01-01T12:00:31Z to 2026-01-01T12:17:10Z"));
            assertThat(schedules.find(dsl, "seconds").orElseThrow().nextRunAt()).isEqualTo(T0.plusSeconds(2001));
        } finally {
            logger.detachAppender(log);
        }
    }

    @Test
    void anIntervalScheduleCatchesUpByArithmetic() {
        register("five", Trigger.every(Duration.ofMinutes(5)), MisfirePolicy.RUN_ALL);
        assertThat(schedules.find(dsl, "five").orElseThrow().nextRunAt())
                .isEqualTo(Instant.parse("2026-01-01T12:05:00Z"));
        clock.set(Instant.parse("2026-01-01T13:00:00Z")); // 12:05 .. 13:00: 12 occurrences
        assertThat(schedules.runDue()).isEqualTo(12);
        assertThat(schedules.find(dsl, "five").orElseThrow().nextRunAt())
                .isEqualTo(Instant.parse("2026-01-01T13:05:00Z"));
    }
}

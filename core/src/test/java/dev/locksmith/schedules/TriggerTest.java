package dev.locksmith.schedules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Occurrences of cron and interval triggers, as cron-utils computes them, daylight saving time
 * included (the behaviour the javadoc of {@link Trigger.Cron} promises), and what is refused.
 */
class TriggerTest {

    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    private static List<ZonedDateTime> next(Trigger trigger, ZonedDateTime from, int n) {
        List<ZonedDateTime> out = new ArrayList<>();
        Instant at = from.toInstant();
        for (int i = 0; i < n; i++) {
            at = trigger.after(at).orElseThrow();
            out.add(at.atZone(from.getZone()));
        }
        return out;
    }

    @Test
    void fiveFieldsAreUnixCronAndSixHaveSecondsFirst() {
        Instant t = Instant.parse("2026-01-01T10:00:00Z");
        Trigger minute = Trigger.cron("* * * * *", "UTC");
        assertThat(minute.after(t)).contains(Instant.parse("2026-01-01T10:01:00Z"));
        assertThat(minute.atOrBefore(t)).contains(t);
        assertThat(minute.atOrBefore(t.minusNanos(1))).contains(Instant.parse("2026-01-01T09:59:00Z"));
        Trigger tenSeconds = Trigger.cron("*/10 * * * * *", "UTC");
        assertThat(tenSeconds.after(t)).contains(Instant.parse("2026-01-01T10:00:10Z"));
        // occurrences are whole seconds, whatever fraction the instant has
        Instant half = Instant.parse("2026-01-01T10:00:00.5Z");
        Trigger everySecond = Trigger.cron("* * * * * *", "UTC");
        assertThat(everySecond.after(half)).contains(Instant.parse("2026-01-01T10:00:01Z"));
        assertThat(everySecond.atOrBefore(half)).contains(t);
        assertThat(everySecond.atOrBefore(Instant.parse("2026-01-01T10:00:00.999999Z")))
                .contains(t);
        assertThat(minute.after(half)).contains(Instant.parse("2026-01-01T10:01:00Z"));
        assertThat(minute.atOrBefore(half)).contains(t);
        // both day fields restricted: either matches, as in Unix cron (1 Feb 2026 is a Sunday)
        Trigger firstOrMonday = Trigger.cron("0 0 1 * 1", "UTC");
        assertThat(next(firstOrMonday, ZonedDateTime.parse("2026-01-25T10:00:00Z"), 3))
                .extracting(ZonedDateTime::toInstant)
                .containsExactly(
                        Instant.parse("2026-01-26T00:00:00Z"),
                        Instant.parse("2026-02-01T00:00:00Z"),
                        Instant.parse("2026-02-02T00:00:00Z"));
    }

    @Test
    void aWallClockTimeThatDoesNotExistIsSkippedThatDay() {
        // 2026-03-29: clocks go from 02:00 to 03:00 in Berlin
        Trigger at0230 = Trigger.cron("30 2 * * *", BERLIN);
        assertThat(next(at0230, ZonedDateTime.of(2026, 3, 28, 12, 0, 0, 0, BERLIN), 2))
                .extracting(ZonedDateTime::toInstant)
                .containsExactly(Instant.parse("2026-03-30T00:30:00Z"), Instant.parse("2026-03-31T00:30:00Z"));
    }

    @Test
    void aWallClockTimeThatHappensTwiceFiresOnceForANamedHourAndTwiceForEveryThirtyMinutes() {
        // 2026-10-25: clocks go from 03:00 back to 02:00 in Berlin
        Trigger at0230 = Trigger.cron("30 2 * * *", BERLIN);
        assertThat(next(at0230, ZonedDateTime.of(2026, 10, 24, 12, 0, 0, 0, BERLIN), 2))
                .extracting(ZonedDateTime::toInstant)
                .containsExactly(Instant.parse("2026-10-25T00:30:00Z"), Instant.parse("2026-10-26T01:30:00Z"));
        Trigger halfHourly = Trigger.cron("*/30 * * * *", BERLIN);
        assertThat(next(halfHourly, ZonedDateTime.of(2026, 10, 25, 1, 40, 0, 0, BERLIN), 5))
                .extracting(ZonedDateTime::toInstant)
                .containsExactly(
                        Instant.parse("2026-10-25T00:00:00Z"),
                        Instant.parse("2026-10-25T00:30:00Z"),
                        Instant.parse("2026-10-25T01:00:00Z"),
                        Instant.parse("2026-10-25T01:30:00Z"),
                        Instant.parse("2026-10-25T02:00:00Z"));
    }

    @Test
    void intervalsAreAlignedToTheEpoch() {
        Trigger fiveMinutes = Trigger.every(Duration.ofMinutes(5));
        Instant t = Instant.parse("2026-01-01T10:02:03.123456Z");
        assertThat(fiveMinutes.after(t)).contains(Instant.parse("2026-01-01T10:05:00Z"));
        assertThat(fiveMinutes.atOrBefore(t)).contains(Instant.parse("2026-01-01T10:00:00Z"));
        Instant boundary = Instant.parse("2026-01-01T10:05:00Z");
        assertThat(fiveMinutes.after(boundary)).contains(Instant.parse("2026-01-01T10:10:00Z"));
        assertThat(fiveMinutes.atOrBefore(boundary)).contains(boundary);
        assertThat(fiveMinutes.atOrBefore(boundary.minusNanos(1))).contains(Instant.parse("2026-01-01T10:00:00Z"));
    }

    @Test
    void invalidExpressionsAndZonesAreRefusedNamingThem() {
        assertThatThrownBy(() -> Trigger.cron("61 * * * *", "UTC"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'61 * * * *'");
        assertThatThrownBy(() -> Trigger.cron("* * * *", "UTC"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'* * * *'")
                .hasMessageContaining("4 fields");
        assertThatThrownBy(() -> Trigger.cron("0 0 30 2 *", "UTC"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'0 0 30 2 *' never fires");
        assertThatThrownBy(() -> Trigger.cron("", "UTC"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0 fields");
        assertThatThrownBy(() -> Trigger.cron("0 3 * * *", "Mars/Olympus_Mons"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'Mars/Olympus_Mons'");
        assertThatThrownBy(() -> Trigger.every(Duration.ofMillis(999)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("interval");
        assertThatThrownBy(() -> Trigger.every(Duration.ofSeconds(1).plusNanos(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("whole number of milliseconds");
        assertThat(Trigger.cron("  0 3 * * *  ", "UTC").expression()).isEqualTo("0 3 * * *");
    }
}

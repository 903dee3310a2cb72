package dev.locksmith.it.schedules;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.SCHEDULES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.TestClock;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.schedules.MisfirePolicy;
import dev.locksmith.schedules.RegisteredSchedule;
import dev.locksmith.schedules.Schedule;
import dev.locksmith.schedules.Schedules;
import dev.locksmith.schedules.SchedulesConfig;
import dev.locksmith.schedules.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Registering, changing, pausing, resuming and removing schedules, with the next occurrence
 * visible, on simulated time; and what is refused before anything is written.
 */
class ScheduleRegistrationTest extends DatabaseTest {

    private static final Instant T0 = Instant.parse("2026-01-01T12:00:30Z");

    private TestClock clock;
    private Schedules schedules;
    private JobQueue queue;

    @BeforeEach
    void empty() {
        dsl.deleteFrom(SCHEDULES).execute();
        dsl.deleteFrom(JOBS).execute();
        clock = new TestClock(T0);
        schedules = new Schedules(dsl, SchedulesConfig.builder().clock(clock).build());
        queue = new JobQueue(dsl);
    }

    private static Schedule everyMinute(String name, String payload) {
        return Schedule.builder(
                        name,
                        Trigger.cron("* * * * *", "UTC"),
                        NewJob.builder("reports", "minute").payload(payload).build())
                .build();
    }

    private List<Job> jobs() {
        return dsl.select(JOBS.ID).from(JOBS).orderBy(JOBS.ID).fetch(JOBS.ID).stream()
                .map(id -> queue.find(dsl, id).orElseThrow())
                .toList();
    }

    private int tickAt(Instant now) {
        clock.set(now);
        return schedules.runDue();
    }

    /**
     * A template's ordering key goes with every occurrence's job, so occurrences of a schedule (or
     * of several schedules sharing a key) run one at a time (it was dropped, and occurrences ran in
     * parallel with the key's other jobs).
     */
    @Test
    void anOccurrenceKeepsItsTemplatesPriorityShardAndOrderingKey() {
        schedules.register(
                dsl,
                Schedule.builder(
                                "keyed",
                                Trigger.cron("* * * * *", "UTC"),
                                NewJob.builder("reports", "minute")
                                        .priority(7)
                                        .maxAttempts(4)
                                        .orderingKey("account-42")
                                        .build())
                        .build());
        assertThat(tickAt(Instant.parse("2026-01-01T12:01:00.2Z"))).isEqualTo(1);
        Job job = jobs().get(0);
        assertThat(job.orderingKey()).isEqualTo("account-42");
        assertThat(job.priority()).isEqualTo(7);
        assertThat(job.maxAttempts()).isEqualTo(4);
    }

    @Test
    void aRegisteredScheduleShowsItsNextOccurrenceAndEnqueuesItWhenDue() {
        RegisteredSchedule registered = schedules.register(dsl, everyMinute("minutely", "{\"n\": 1}"));

        assertThat(registered.nextRunAt()).isEqualTo(Instant.parse("2026-01-01T12:01:00Z"));
        assertThat(registered.lastOccurrence()).isEmpty();
        assertThat(registered.paused()).isFalse();
        assertThat(registered.schedule().misfire()).isEqualTo(MisfirePolicy.RUN_ONCE);
        assertThat(schedules.find(dsl, "minutely")).contains(registered);
        assertThat(schedules.list(dsl)).containsExactly(registered);

        assertThat(tickAt(Instant.parse("2026-01-01T12:00:59Z"))).isZero();
        assertThat(jobs()).isEmpty();
        assertThat(tickAt(Instant.parse("2026-01-01T12:01:00.2Z"))).isEqualTo(1);
        assertThat(tickAt(Instant.parse("2026-01-01T12:01:30Z"))).isZero();

        Job job = jobs().get(0);
        assertThat(job.queue()).isEqualTo("reports");
        assertThat(job.kind()).isEqualTo("minute");
        assertThat(job.payload()).isEqualTo("{\"n\": 1}");
        assertThat(job.uniqueKey()).isEqualTo("schedule:minutely:2026-01-01T12:01:00Z");
        assertThat(job.uniqueKey()).isEqualTo(Schedules.uniqueKey("minutely", Instant.parse("2026-01-01T12:01:00Z")));
        RegisteredSchedule after = schedules.find(dsl, "minutely").orElseThrow();
        assertThat(after.nextRunAt()).isEqualTo(Instant.parse("2026-01-01T12:02:00Z"));
        assertThat(after.lastOccurrence()).contains(Instant.parse("2026-01-01T12:01:00Z"));
    }

    @Test
    void registeringTheSameScheduleAgainChangesNothingAndAChangedTemplateAppliesFromTheNextTick() {
        RegisteredSchedule first = schedules.register(dsl, everyMinute("minutely", "{\"v\": 1}"));
        clock.set(Instant.parse("2026-01-01T12:00:50Z"));

        RegisteredSchedule again = schedules.register(dsl, everyMinute("minutely", "{\"v\": 1}"));
        assertThat(again).isEqualTo(first); // updated_at too: nothing was written

        RegisteredSchedule changed = schedules.register(
                dsl,
                Schedule.builder(
                                "minutely",
                                Trigger.cron("* * * * *", "UTC"),
                                NewJob.builder("reports", "minute")
                                        .payload("{\"v\": 2}")
                                        .priority(7)
                                        .maxAttempts(3)
                                        .build())
                        .misfire(MisfirePolicy.SKIP)
                        .build());
        assertThat(changed.nextRunAt()).isEqualTo(first.nextRunAt()); // same trigger: same next occurrence
        assertThat(changed.schedule().misfire()).isEqualTo(MisfirePolicy.SKIP);

        assertThat(tickAt(Instant.parse("2026-01-01T12:01:01Z"))).isEqualTo(1);
        Job job = jobs().get(0);
        assertThat(job.payload()).isEqualTo("{\"v\": 2}");
        assertThat(job.priority()).isEqualTo(7);
        assertThat(job.maxAttempts()).isEqualTo(3);
    }

    @Test
    void aChangedTriggerTakesEffectWithoutARestartFromTheNextOccurrenceAfterNow() {
        schedules.register(dsl, everyMinute("report", "{}"));
        assertThat(tickAt(Instant.parse("2026-01-01T12:01:00Z"))).isEqualTo(1);
        clock.set(Instant.parse("2026-01-01T12:01:10Z"));

        RegisteredSchedule hourly = schedules.register(
                dsl,
                Schedule.builder("report", Trigger.cron("0 * * * *", "UTC"), NewJob.of("reports", "hourly"))
                        .build());
        assertThat(hourly.nextRunAt()).isEqualTo(Instant.parse("2026-01-01T13:00:00Z"));
        assertThat(tickAt(Instant.parse("2026-01-01T12:59:59Z"))).isZero();
        assertThat(tickAt(Instant.parse("2026-01-01T13:00:00Z"))).isEqualTo(1);

        RegisteredSchedule interval = schedules.register(
                dsl,
                Schedule.builder("report", Trigger.every(Duration.ofMinutes(15)), NewJob.of("reports", "quarter"))
                        .build());
        assertThat(interval.nextRunAt()).isEqualTo(Instant.parse("2026-01-01T13:15:00Z"));
        assertThat(interval.schedule().trigger()).isEqualTo(Trigger.every(Duration.ofMinutes(15)));
        assertThat(tickAt(Instant.parse("2026-01-01T13:15:00Z"))).isEqualTo(1);

        assertThat(jobs())
                .extracting(Job::kind, Job::uniqueKey)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("minute", "schedule:report:2026-01-01T12:01:00Z"),
                        org.assertj.core.groups.Tuple.tuple("hourly", "schedule:report:2026-01-01T13:00:00Z"),
                        org.assertj.core.groups.Tuple.tuple("quarter", "schedule:report:2026-01-01T13:15:00Z"));
    }

    @Test
    void aPausedScheduleEnqueuesNothingAndResumesFromItsNextOccurrenceAfterNow() {
        schedules.register(dsl, everyMinute("minutely", "{}"));
        assertThat(schedules.pause(dsl, "minutely")).isTrue();
        assertThat(schedules.pause(dsl, "minutely")).isTrue(); // already paused: still there
        assertThat(schedules.find(dsl, "minutely").orElseThrow().paused()).isTrue();

        assertThat(tickAt(Instant.parse("2026-01-01T12:05:00Z"))).isZero();
        assertThat(jobs()).isEmpty();

        clock.set(Instant.parse("2026-01-01T12:05:30Z"));
        assertThat(schedules.resume(dsl, "minutely")).isTrue();
        RegisteredSchedule resumed = schedules.find(dsl, "minutely").orElseThrow();
        assertThat(resumed.paused()).isFalse();
        assertThat(resumed.nextRunAt()).isEqualTo(Instant.parse("2026-01-01T12:06:00Z"));
        assertThat(schedules.resume(dsl, "minutely")).isTrue(); // not paused: left as it is
        assertThat(schedules.find(dsl, "minutely").orElseThrow()).isEqualTo(resumed);

        // the occurrences while paused (12:01 .. 12:05) are not caught up, whatever the policy
        assertThat(tickAt(Instant.parse("2026-01-01T12:06:00Z"))).isEqualTo(1);
        assertThat(jobs()).extracting(Job::uniqueKey).containsExactly("schedule:minutely:2026-01-01T12:06:00Z");

        assertThat(schedules.pause(dsl, "nope")).isFalse();
        assertThat(schedules.resume(dsl, "nope")).isFalse();
    }

    @Test
    void aRemovedScheduleEnqueuesNothingMoreAndItsJobsStay() {
        schedules.register(dsl, everyMinute("minutely", "{}"));
        assertThat(tickAt(Instant.parse("2026-01-01T12:01:00Z"))).isEqualTo(1);

        assertThat(schedules.remove(dsl, "minutely")).isTrue();
        assertThat(schedules.remove(dsl, "minutely")).isFalse();
        assertThat(schedules.find(dsl, "minutely")).isEmpty();
        assertThat(schedules.list(dsl)).isEmpty();

        assertThat(tickAt(Instant.parse("2026-01-01T12:10:00Z"))).isZero();
        assertThat(jobs()).hasSize(1);
    }

    @Test
    void aScheduleWhoseNextRunWentBackEnqueuesNoOccurrenceTwice() {
        schedules.register(dsl, everyMinute("minutely", "{}"));
        assertThat(tickAt(Instant.parse("2026-01-01T12:01:00Z"))).isEqualTo(1);

        // a JVM whose clock is 55 s behind registers a changed trigger with the same occurrences:
        // next_run_at goes back to 12:01, which was enqueued already
        clock.set(Instant.parse("2026-01-01T12:00:05Z"));
        RegisteredSchedule back = schedules.register(
                dsl,
                Schedule.builder("minutely", Trigger.cron("0-59 * * * *", "UTC"), NewJob.of("reports", "minute"))
                        .build());
        assertThat(back.nextRunAt()).isEqualTo(Instant.parse("2026-01-01T12:01:00Z"));
        assertThat(back.lastOccurrence()).contains(Instant.parse("2026-01-01T12:01:00Z"));

        // the tick does not enqueue at or before last_occurrence
        assertThat(tickAt(Instant.parse("2026-01-01T12:01:10Z"))).isZero();
        assertThat(tickAt(Instant.parse("2026-01-01T12:02:00Z"))).isEqualTo(1);

        // and when even that record is gone (edited by hand), the unique key of the still-pending
        // job makes the replay insert nothing
        dsl.update(SCHEDULES)
                .set(SCHEDULES.NEXT_RUN_AT, java.time.OffsetDateTime.parse("2026-01-01T12:02:00Z"))
                .setNull(SCHEDULES.LAST_OCCURRENCE)
                .execute();
        assertThat(tickAt(Instant.parse("2026-01-01T12:02:10Z"))).isEqualTo(1); // handed to the queue...
        assertThat(jobs()) // ...which returned the pending job of 12:02
                .extracting(Job::uniqueKey)
                .containsExactly("schedule:minutely:2026-01-01T12:01:00Z", "schedule:minutely:2026-01-01T12:02:00Z");
    }

    @Test
    void changesRunInTheCallersTransactionAndRollBackWithIt() {
        try {
            dsl.transaction(c -> {
                schedules.register(c.dsl(), everyMinute("rolled-back", "{}"));
                assertThat(schedules.find(c.dsl(), "rolled-back")).isPresent();
                throw new IllegalStateException("the caller's work failed");
            });
        } catch (IllegalStateException expected) {
            // the registration went with it
        }
        assertThat(schedules.find(dsl, "rolled-back")).isEmpty();
    }

    @Test
    void invalidCronExpressionsAndZonesAreRefusedNamingThemBeforeAnythingIsWritten() {
        assertThatThrownBy(() -> Trigger.cron("0 25 * * *", "UTC"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'0 25 * * *'");
        assertThatThrownBy(() -> Trigger.cron("every day at noon", "UTC"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'every day at noon'");
        assertThatThrownBy(() -> Trigger.cron("0 0 31 2 *", "UTC"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'0 0 31 2 *' never fires");
        assertThatThrownBy(() -> Trigger.cron("0 3 * * *", "Europe/Atlantis"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'Europe/Atlantis'");
        assertThatThrownBy(() -> Schedule.builder(
                                "delayed",
                                Trigger.every(Duration.ofMinutes(1)),
                                NewJob.builder("q", "k")
                                        .delay(Duration.ofSeconds(5))
                                        .build())
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delayed")
                .hasMessageContaining("no delay");
        assertThatThrownBy(() -> Schedule.builder(
                                "keyed",
                                Trigger.every(Duration.ofMinutes(1)),
                                NewJob.builder("q", "k").uniqueKey("mine").build())
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no unique key");
        assertThatThrownBy(() -> Schedule.builder(" ", Trigger.every(Duration.ofMinutes(1)), NewJob.of("q", "k"))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name must not be blank");
        assertThat(dsl.fetchCount(SCHEDULES)).isZero();
    }

    @Test
    void aCronTriggerIsStoredWithItsZoneAndReadBackEqual() {
        Schedule berlin = Schedule.builder(
                        "berlin", Trigger.cron("0 30 2 * * *", ZoneId.of("Europe/Berlin")), NewJob.of("q", "k"))
                .misfire(MisfirePolicy.RUN_ALL)
                .build();
        schedules.register(dsl, berlin);
        Optional<RegisteredSchedule> found = schedules.find(dsl, "berlin");
        assertThat(found.map(RegisteredSchedule::schedule)).contains(berlin);
        // 02:30 Berlin time is 01:30 UTC in winter
        assertThat(found.orElseThrow().nextRunAt()).isEqualTo(Instant.parse("2026-01-02T01:30:00Z"));
        assertThat(dsl.fetchValue("SELECT zone FROM locksmith.schedules WHERE name = 'berlin'"))
                .isEqualTo("Europe/Berlin");
    }
}

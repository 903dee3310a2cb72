package dev.locksmith.it.schedules;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.SCHEDULES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.TestClock;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.schedules.Schedule;
import dev.locksmith.schedules.SchedulerWorker;
import dev.locksmith.schedules.Schedules;
import dev.locksmith.schedules.SchedulesConfig;
import dev.locksmith.schedules.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The runner: a {@link SchedulerWorker} ticks on its own daemon thread, on the test's clock or
 * the database's, its jobs reach a {@link JobWorker} and the {@link LocksmithObserver} of its
 * {@code DSLContext}, and {@code close()} stops it.
 */
class SchedulerWorkerTest extends DatabaseTest {

    @BeforeEach
    void empty() {
        dsl.deleteFrom(SCHEDULES).execute();
        dsl.deleteFrom(JOBS).execute();
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for %s", what).isLessThan(deadline);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    private int jobs() {
        return dsl.fetchCount(JOBS);
    }

    @Test
    void itTicksOnItsOwnThreadAtTheConfiguredClocksTimeUntilClosed() {
        TestClock clock = new TestClock(Instant.parse("2026-01-01T12:00:30Z"));
        AtomicInteger enqueuedSeen = new AtomicInteger();
        Map<String, Integer> byKind = new ConcurrentHashMap<>();
        DSLContext observed = Locksmith.builder(dsl)
                .observer(new LocksmithObserver() {
                    @Override
                    public void jobsEnqueued(String queue, String kind, int count) {
                        enqueuedSeen.addAndGet(count);
                        byKind.merge(queue + "/" + kind, count, Integer::sum);
                    }
                })
                .build()
                .dsl();
        SchedulerWorker scheduler = SchedulerWorker.builder(observed)
                .tickInterval(Duration.ofMillis(10))
                .config(SchedulesConfig.builder().clock(clock).build())
                .build();
        Schedules schedules = scheduler.schedules();
        schedules.register(
                dsl,
                Schedule.builder("minutely", Trigger.cron("* * * * *", "UTC"), NewJob.of("reports", "minute"))
                        .build());
        try (scheduler) {
            scheduler.start();
            assertThatThrownBy(scheduler::start).isInstanceOf(IllegalStateException.class);
            clock.set(Instant.parse("2026-01-01T12:01:00Z"));
            await(() -> jobs() == 1, "the 12:01 job");
            clock.set(Instant.parse("2026-01-01T12:02:00Z"));
            await(() -> jobs() == 2, "the 12:02 job");
        }
        // closed: time moves on, nothing is enqueued
        clock.set(Instant.parse("2026-01-01T12:10:00Z"));
        assertThat(schedules.find(dsl, "minutely").orElseThrow().nextRunAt())
                .isEqualTo(Instant.parse("2026-01-01T12:03:00Z"));
        assertThat(jobs()).isEqualTo(2);
        // the jobs went through the JobQueue, which told the observer
        assertThat(enqueuedSeen).hasValue(2);
        assertThat(byKind).containsExactly(Map.entry("reports/minute", 2));
    }

    @Test
    void onTheDatabaseClockItsJobsReachAJobWorker() {
        List<String> handled = new CopyOnWriteArrayList<>();
        new Schedules(dsl)
                .register(
                        dsl,
                        Schedule.builder(
                                        "every-second",
                                        Trigger.cron("* * * * * *", "UTC"),
                                        NewJob.of("heartbeat", "beat"))
                                .build());
        try (SchedulerWorker scheduler = SchedulerWorker.builder(dsl)
                        .tickInterval(Duration.ofMillis(50))
                        .build()
                        .start();
                JobWorker worker = JobWorker.builder(pool, "heartbeat", (job, tx) -> handled.add(job.uniqueKey()))
                        .threads(1)
                        .build()
                        .start()) {
            await(() -> handled.size() >= 2, "two occurrences handled");
        }
        assertThat(handled)
                .allMatch(key -> key.startsWith("schedule:every-second:"))
                .doesNotHaveDuplicates();
    }
}

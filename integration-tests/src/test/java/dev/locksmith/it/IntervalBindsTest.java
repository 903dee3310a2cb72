package dev.locksmith.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.internal.Durations;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.stream.Stream;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Durations (leases, holds, waits) reach the server as the interval they are, at every length the
 * API accepts, on every supported PostgreSQL. PostgreSQL 13 reads the number in {@code '3600000000
 * microseconds'} as a 32-bit integer and refused every interval from about 36 minutes on ("interval
 * field value out of range"), so a one-hour lease failed there; the library now sends a time
 * ({@code 1:00:00.000000}), which every version reads.
 */
class IntervalBindsTest extends DatabaseTest {

    static Stream<Duration> durations() {
        return Stream.of(
                Duration.ZERO,
                Duration.ofNanos(1_000),
                Duration.ofMillis(1_500),
                Duration.ofSeconds(2_147, 483_647_000), // 2^31 - 1 microseconds
                Duration.ofSeconds(2_147, 483_648_000), // 2^31: PostgreSQL 13's limit for 'N microseconds'
                Duration.ofHours(1),
                Duration.ofDays(400).plusNanos(1_000),
                Duration.ofHours(-2).minusNanos(1_000),
                Durations.MAX);
    }

    @ParameterizedTest
    @MethodSource("durations")
    void everyDurationArrivesAsTheSameNumberOfMicrosecondsAndNoDays(Duration duration) {
        // The expected value is computed by the server from the microseconds as a number; a day or
        // month part would make timestamptz arithmetic calendar-aware, so there must be none.
        RenderedQuery q = RenderedQuery.of(
                dsl,
                dsl.select(
                        DSL.field(
                                "cast({0} as interval) = {1} * interval '1 microsecond'",
                                Boolean.class, DSL.param("d", SQLDataType.VARCHAR), DSL.param("m", SQLDataType.BIGINT)),
                        DSL.field(
                                "extract(day from cast({0} as interval)) = 0 AND extract(month from cast({1} as interval)) = 0",
                                Boolean.class,
                                DSL.param("d2", SQLDataType.VARCHAR),
                                DSL.param("d3", SQLDataType.VARCHAR))));
        long micros = duration.getSeconds() * 1_000_000L + duration.getNano() / 1_000;
        List<boolean[]> rows = q.fetch(
                dsl,
                q.binds()
                        .setInterval("d", duration)
                        .set("m", micros)
                        .setInterval("d2", duration)
                        .setInterval("d3", duration),
                rs -> new boolean[] {rs.getBoolean(1), rs.getBoolean(2)});
        assertThat(rows.get(0)[0]).as("%s as an interval", duration).isTrue();
        assertThat(rows.get(0)[1]).as("%s has no day or month part", duration).isTrue();
    }

    @Test
    void aClaimTakesALeaseOfAnHour() {
        JobQueue queue = new JobQueue(dsl);
        long id = dsl.transactionResult(c -> queue.enqueue(c.dsl(), NewJob.of("interval_q", "k")));
        OffsetDateTime before =
                dsl.select(DSL.currentOffsetDateTime()).fetchOne().value1();

        List<Job> claimed = queue.claim("interval_q", 1, Duration.ofHours(1), "w");

        assertThat(claimed).extracting(Job::id).containsExactly(id);
        OffsetDateTime lockedUntil = claimed.get(0).lockedUntil();
        assertThat(lockedUntil).isNotNull();
        assertThat(Duration.between(before, lockedUntil)).isBetween(Duration.ofMinutes(59), Duration.ofMinutes(61));
    }
}

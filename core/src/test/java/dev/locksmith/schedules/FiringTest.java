package dev.locksmith.schedules;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What one tick enqueues for a due schedule, per misfire policy, without a database. */
class FiringTest {

    private static final Instant T = Instant.parse("2026-01-01T12:00:00Z");
    private static final Duration GRACE = Duration.ofSeconds(10);

    private static Schedule everyMinute(MisfirePolicy policy) {
        return Schedule.builder("s", Trigger.cron("* * * * *", "UTC"), NewJob.of("q", "k"))
                .misfire(policy)
                .build();
    }

    private static Firing plan(MisfirePolicy policy, Instant next, Instant last, Instant now, int cap) {
        return Firing.plan(everyMinute(policy), next, last, now, GRACE, cap).orElseThrow();
    }

    private static List<Instant> minutes(int from, int to) {
        List<Instant> out = new ArrayList<>();
        for (int m = from; m <= to; m++) {
            out.add(T.plus(Duration.ofMinutes(m)));
        }
        return out;
    }

    @Test
    void anOnTimeOccurrenceIsEnqueuedByEveryPolicy() {
        for (MisfirePolicy policy : MisfirePolicy.values()) {
            Firing f = plan(policy, T.plusSeconds(60), null, T.plusSeconds(61), 1000);
            assertThat(f.enqueue()).as(policy.name()).containsExactly(T.plusSeconds(60));
            assertThat(f.latest()).isEqualTo(T.plusSeconds(60));
            assertThat(f.next()).isEqualTo(T.plusSeconds(120));
        }
    }

    @Test
    void tenMissedOccurrencesGiveOneAllOrNone() {
        Instant now = T.plus(Duration.ofMinutes(10)).plusSeconds(30); // 12:10:30; due 12:01 .. 12:10
        Firing once = plan(MisfirePolicy.RUN_ONCE, T.plusSeconds(60), T, now, 1000);
        Firing all = plan(MisfirePolicy.RUN_ALL, T.plusSeconds(60), T, now, 1000);
        Firing skip = plan(MisfirePolicy.SKIP, T.plusSeconds(60), T, now, 1000);
        assertThat(once.enqueue()).containsExactly(T.plus(Duration.ofMinutes(10)));
        assertThat(all.enqueue()).containsExactlyElementsOf(minutes(1, 10));
        assertThat(skip.enqueue()).isEmpty();
        for (Firing f : List.of(once, all, skip)) {
            assertThat(f.latest()).isEqualTo(T.plus(Duration.ofMinutes(10)));
            assertThat(f.next()).isEqualTo(T.plus(Duration.ofMinutes(11)));
        }
    }

    @Test
    void skipStillEnqueuesTheLatestWhenItIsWithinTheGrace() {
        Instant now = T.plus(Duration.ofMinutes(10)).plusSeconds(5);
        assertThat(plan(MisfirePolicy.SKIP, T.plusSeconds(60), T, now, 1000).enqueue())
                .containsExactly(T.plus(Duration.ofMinutes(10)));
    }

    @Test
    void runAllKeepsTheLatestOccurrencesUpToTheCap() {
        Instant now = T.plus(Duration.ofMinutes(10)).plusSeconds(30);
        assertThat(plan(MisfirePolicy.RUN_ALL, T.plusSeconds(60), T, now, 4).enqueue())
                .containsExactlyElementsOf(minutes(7, 10));
        // exactly the cap after next_run_at: next_run_at itself is the one dropped
        assertThat(plan(MisfirePolicy.RUN_ALL, T.plusSeconds(60), T, now, 9).enqueue())
                .containsExactlyElementsOf(minutes(2, 10));
        assertThat(plan(MisfirePolicy.RUN_ALL, T.plusSeconds(60), T, now, 10).enqueue())
                .containsExactlyElementsOf(minutes(1, 10));
    }

    @Test
    void nothingAtOrBeforeTheLastOccurrenceIsEnqueuedAgain() {
        // next_run_at went back (a registration with a clock that is behind): 12:01 .. 12:05 were handled
        Instant now = T.plus(Duration.ofMinutes(7)).plusSeconds(1);
        Firing all = plan(MisfirePolicy.RUN_ALL, T.plusSeconds(60), T.plus(Duration.ofMinutes(5)), now, 1000);
        assertThat(all.enqueue()).containsExactlyElementsOf(minutes(6, 7));
        Firing none = plan(MisfirePolicy.RUN_ONCE, T.plusSeconds(60), T.plus(Duration.ofMinutes(9)), now, 1000);
        assertThat(none.enqueue()).isEmpty();
        assertThat(none.latest()).isEqualTo(T.plus(Duration.ofMinutes(9)));
    }
}

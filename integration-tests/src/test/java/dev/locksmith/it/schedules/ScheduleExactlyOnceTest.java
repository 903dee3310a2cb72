package dev.locksmith.it.schedules;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.SCHEDULES;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.codegen.tables.records.SchedulesRecord;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.Occurrences;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.schedules.Schedules;
import dev.locksmith.schedules.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three schedulers, each on its own connections, tick together through one minute of simulated
 * time (240 ticks each, 250 ms apart) over 12 schedules, in the worst interleaving: every
 * scheduler's reads of the {@code schedules} table (the "anything due?" probe, then the claim)
 * wait for the other two schedulers' reads of that tick, so all three have read the due rows
 * before any of them writes. {@link Schedules} enqueues each of the 613 occurrences once; a naive
 * scheduler (the same reads without {@code FOR UPDATE SKIP LOCKED}, the same writes without a
 * unique key) enqueues each three times in exactly the same harness.
 */
class ScheduleExactlyOnceTest extends DatabaseTest {

    static final int SCHEDULERS = 3;

    /** A tick at a simulated time: returns the jobs it enqueued. */
    @FunctionalInterface
    interface Tick {
        int at(Instant now);
    }

    private final List<HikariDataSource> pools = new ArrayList<>();

    @BeforeEach
    void twelveSchedules() {
        Occurrences.register(dsl);
    }

    @AfterEach
    void closePools() {
        pools.forEach(HikariDataSource::close);
        pools.clear();
    }

    /**
     * A context on a pool of its own whose SELECTs on the schedules table each wait at
     * {@code reads} for the other schedulers' SELECT of the same tick.
     */
    private DSLContext gated(CyclicBarrier reads) {
        HikariDataSource own = TestPostgres.pool(database, 2);
        pools.add(own);
        DefaultConfiguration configuration = new DefaultConfiguration();
        configuration.set(own);
        configuration.set(SQLDialect.POSTGRES);
        configuration.set(new ExecuteListener() {
            @Override
            public void executeEnd(ExecuteContext ctx) {
                String sql = ctx.sql();
                if (sql != null && sql.regionMatches(true, 0, "select", 0, 6) && sql.contains("schedules")) {
                    try {
                        reads.await(60, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        throw new IllegalStateException("schedulers fell out of step", e);
                    }
                }
            }
        });
        return DSL.using(configuration);
    }

    /** Runs {@link Occurrences#STEPS} ticks on each scheduler in step; returns each one's jobs. */
    private List<Integer> tickTogether(Function<DSLContext, Tick> scheduler) throws Exception {
        CyclicBarrier reads = new CyclicBarrier(SCHEDULERS);
        CyclicBarrier steps = new CyclicBarrier(SCHEDULERS);
        List<Tick> ticks = new ArrayList<>();
        for (int i = 0; i < SCHEDULERS; i++) {
            ticks.add(scheduler.apply(gated(reads)));
        }
        return Concurrently.run(SCHEDULERS, 300, thread -> {
            int enqueued = 0;
            for (int step = 1; step <= Occurrences.STEPS; step++) {
                // every write of the previous tick is committed before any read of this one
                steps.await(60, TimeUnit.SECONDS);
                enqueued += ticks.get(thread).at(Occurrences.at(step));
            }
            return enqueued;
        });
    }

    private Map<String, Integer> jobsPerKey(org.jooq.Field<String> key) {
        return dsl.select(key, DSL.count()).from(JOBS).groupBy(key).fetchMap(key, DSL.count());
    }

    @Test
    void threeSchedulersThatAllReadBeforeAnyWritesEnqueueEachOccurrenceOnce() throws Exception {
        List<Integer> perScheduler = tickTogether(ctx -> new Schedules(ctx)::runDue);

        List<String> expected = Occurrences.expectedKeys();
        System.out.printf("schedules: %d occurrences, enqueued per scheduler %s%n", expected.size(), perScheduler);
        assertThat(expected).hasSize(613);
        // each occurrence was handed to the queue once: the unique key did not have to absorb a second
        assertThat(perScheduler.stream().mapToInt(Integer::intValue).sum()).isEqualTo(613);
        Map<String, Integer> perKey = jobsPerKey(JOBS.UNIQUE_KEY);
        assertThat(perKey.keySet()).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(perKey.values()).allMatch(n -> n == 1);
        assertThat(dsl.fetchCount(JOBS)).isEqualTo(613);
        assertThat(dsl.fetchValues(SCHEDULES.NEXT_RUN_AT))
                .allMatch(next -> next.toInstant().isAfter(Occurrences.END));
    }

    @Test
    void aNaiveSchedulerWithoutRowLocksEnqueuesEachOccurrenceThreeTimes() throws Exception {
        List<Integer> perScheduler = tickTogether(ctx -> now -> naiveTick(ctx, now));

        assertThat(perScheduler).containsExactly(613, 613, 613);
        Map<String, Integer> perKey = jobsPerKey(DSL.field("payload->>'key'", String.class));
        assertThat(perKey.keySet()).containsExactlyInAnyOrderElementsOf(Occurrences.expectedKeys());
        assertThat(perKey.values()).allMatch(n -> n == SCHEDULERS);
        assertThat(dsl.fetchCount(JOBS)).isEqualTo(3 * 613);
    }

    /**
     * What a scheduler without row locks does: read the due schedules, enqueue each one's
     * occurrence (no unique key), move it on; each statement on its own.
     */
    private static int naiveTick(DSLContext ctx, Instant now) {
        OffsetDateTime at = OffsetDateTime.ofInstant(now, ZoneOffset.UTC);
        var due = SCHEDULES.PAUSED.isFalse().and(SCHEDULES.NEXT_RUN_AT.le(at));
        if (!ctx.fetchExists(SCHEDULES, due)) {
            return 0;
        }
        List<SchedulesRecord> rows =
                ctx.selectFrom(SCHEDULES).where(due).orderBy(SCHEDULES.NAME).fetch();
        JobQueue queue = new JobQueue(ctx);
        for (SchedulesRecord row : rows) {
            Trigger trigger = row.getCron() != null
                    ? Trigger.cron(row.getCron(), row.getZone())
                    : Trigger.every(Duration.ofMillis(row.getIntervalMs()));
            String key = Schedules.uniqueKey(row.getName(), row.getNextRunAt().toInstant());
            queue.enqueue(
                    ctx,
                    NewJob.builder(row.getQueue(), row.getKind())
                            .payload("{\"key\": \"" + key + "\"}")
                            .build());
            ctx.update(SCHEDULES)
                    .set(
                            SCHEDULES.NEXT_RUN_AT,
                            OffsetDateTime.ofInstant(trigger.after(now).orElseThrow(), ZoneOffset.UTC))
                    .where(SCHEDULES.NAME.eq(row.getName()))
                    .execute();
        }
        return rows.size();
    }
}

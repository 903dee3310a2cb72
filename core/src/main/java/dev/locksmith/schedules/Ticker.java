package dev.locksmith.schedules;

import static dev.locksmith.codegen.Tables.SCHEDULES;

import dev.locksmith.codegen.tables.records.SchedulesRecord;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tick behind {@link Schedules#runDue()}: probe, then per batch of due schedules one
 * transaction that locks them ({@code FOR UPDATE SKIP LOCKED}), enqueues their occurrences and
 * moves them on.
 */
final class Ticker {

    private static final Logger LOG = LoggerFactory.getLogger(Schedules.class);

    private final DSLContext dsl;
    private final SchedulesConfig config;
    private final SchemaMapping schema;
    private final JobQueue queue;

    Ticker(DSLContext dsl, SchedulesConfig config, SchemaMapping schema, JobQueue queue) {
        this.dsl = dsl;
        this.config = config;
        this.schema = schema;
        this.queue = queue;
    }

    /** One tick at {@code given}, or at the database's {@code now()} when null; returns the jobs enqueued. */
    int tick(@Nullable Instant given) {
        return Errors.translating(() -> {
            Field<OffsetDateTime> time = given == null ? DSL.currentOffsetDateTime() : DSL.val(ScheduleRows.at(given));
            // EXISTS as a template rather than DSL.exists(Select): jOOQ 3.21 replaced that method by
            // DSL.exists(TableLike), so code compiled against 3.19 fails to link on 3.21
            // (NoSuchMethodError); DSL.field(String, Class, QueryPart...) is the same in both.
            var probe = dsl.select(
                            time,
                            DSL.field(
                                    "EXISTS ({0})",
                                    Boolean.class,
                                    DSL.selectOne().from(SCHEDULES).where(ScheduleRows.due(time))))
                    .fetchSingle();
            if (!Boolean.TRUE.equals(probe.value2())) {
                return 0;
            }
            Instant now = probe.value1().toInstant();
            Set<String> unreadable = new HashSet<>();
            int jobs = 0;
            while (true) {
                int[] batch = dsl.transactionResult(c -> batch(schema.on(c.dsl()), now, unreadable));
                jobs += batch[1];
                if (batch[0] < config.batchSize()) {
                    return jobs;
                }
            }
        });
    }

    /** One transaction's worth: returns {schedules locked, jobs enqueued}. */
    private int[] batch(DSLContext tx, Instant now, Set<String> unreadable) {
        List<SchedulesRecord> rows = tx.selectFrom(SCHEDULES)
                .where(ScheduleRows.due(DSL.val(ScheduleRows.at(now))))
                .and(unreadable.isEmpty() ? DSL.noCondition() : SCHEDULES.NAME.notIn(unreadable))
                .orderBy(SCHEDULES.NEXT_RUN_AT, SCHEDULES.NAME)
                .limit(config.batchSize())
                .forUpdate()
                .skipLocked()
                .fetch();
        List<NewJob> jobs = new ArrayList<>();
        for (SchedulesRecord row : rows) {
            Optional<Schedule> schedule = readable(row);
            Optional<Firing> firing = schedule.flatMap(s -> plan(s, row, now));
            if (schedule.isEmpty() || firing.isEmpty()) {
                unreadable.add(row.getName());
                continue;
            }
            for (Instant occurrence : firing.get().enqueue()) {
                jobs.add(job(schedule.get(), occurrence));
            }
            tx.update(SCHEDULES)
                    .set(SCHEDULES.NEXT_RUN_AT, ScheduleRows.at(firing.get().next()))
                    .set(SCHEDULES.LAST_OCCURRENCE, ScheduleRows.at(firing.get().latest()))
                    .set(SCHEDULES.UPDATED_AT, DSL.currentOffsetDateTime())
                    .where(SCHEDULES.NAME.eq(row.getName()))
                    .execute();
        }
        queue.enqueueAll(tx, jobs);
        return new int[] {rows.size(), jobs.size()};
    }

    /**
     * The row's schedule, or empty (logged) when this JVM cannot read it: a time zone missing from
     * its time-zone data, or a cron expression its cron-utils does not parse. Such a schedule is
     * left as it is, for a JVM that can.
     */
    private static Optional<Schedule> readable(SchedulesRecord row) {
        try {
            return Optional.of(ScheduleRows.schedule(row));
        } catch (IllegalStateException e) {
            LOG.error("{}; it is left as it is", e.getMessage(), e);
            return Optional.empty();
        }
    }

    /** The tick's plan for a due row, or empty (logged) when the schedule never fires again. */
    private Optional<Firing> plan(Schedule schedule, SchedulesRecord row, Instant now) {
        OffsetDateTime last = row.getLastOccurrence();
        Optional<Firing> firing = Firing.plan(
                schedule,
                row.getNextRunAt().toInstant(),
                last == null ? null : last.toInstant(),
                now,
                config.misfireGrace(),
                config.maxCatchUp());
        if (firing.isEmpty()) {
            LOG.error("schedule {} has no occurrence after {}; it is left as it is", row.getName(), now);
        }
        return firing;
    }

    private static NewJob job(Schedule schedule, Instant occurrence) {
        NewJob template = schedule.template();
        return new NewJob(
                template.queue(),
                template.kind(),
                template.payload(),
                template.priority(),
                Duration.ZERO,
                template.maxAttempts(),
                template.shard(),
                Optional.of(Schedules.uniqueKey(schedule.name(), occurrence)),
                template.orderingKey(),
                template.concurrencyKey());
    }
}

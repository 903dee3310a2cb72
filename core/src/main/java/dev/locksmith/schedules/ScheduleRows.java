package dev.locksmith.schedules;

import static dev.locksmith.codegen.Tables.SCHEDULES;

import dev.locksmith.codegen.tables.records.SchedulesRecord;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;
import org.jooq.Condition;
import org.jooq.Field;
import org.jooq.impl.DSL;

/** Rows of the {@code schedules} table to values and back. */
final class ScheduleRows {

    private ScheduleRows() {}

    /** The rows a tick at {@code now} takes: not paused, {@code next_run_at <= now}. */
    static Condition due(Field<OffsetDateTime> now) {
        return DSL.not(DSL.condition(SCHEDULES.PAUSED)).and(SCHEDULES.NEXT_RUN_AT.le(now));
    }

    /** {@code instant} as the driver binds {@code timestamptz}. */
    static OffsetDateTime at(Instant instant) {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }

    static RegisteredSchedule registered(SchedulesRecord row) {
        OffsetDateTime last = row.getLastOccurrence();
        return new RegisteredSchedule(
                schedule(row),
                row.getNextRunAt().toInstant(),
                Optional.ofNullable(last).map(OffsetDateTime::toInstant),
                row.getPaused(),
                row.getUpdatedAt().toInstant());
    }

    /** The schedule a row holds; {@link IllegalStateException} naming it when it is not one. */
    static Schedule schedule(SchedulesRecord row) {
        try {
            Trigger trigger = row.getCron() != null
                    ? Trigger.cron(row.getCron(), row.getZone())
                    : Trigger.every(Duration.ofMillis(row.getIntervalMs()));
            NewJob.Builder builder = NewJob.builder(row.getQueue(), row.getKind())
                    .payload(row.getPayload().data())
                    .priority(row.getPriority())
                    .maxAttempts(row.getMaxAttempts())
                    .shard(row.getShard());
            if (row.getOrderingKey() != null) {
                builder.orderingKey(row.getOrderingKey());
            }
            if (row.getConcurrencyKey() != null) {
                builder.concurrencyKey(row.getConcurrencyKey());
            }
            NewJob template = builder.build();
            return new Schedule(row.getName(), trigger, template, MisfirePolicy.fromDb(row.getMisfire()));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(
                    "schedule " + row.getName() + " in the schedules table is not valid here: " + e.getMessage(), e);
        }
    }
}

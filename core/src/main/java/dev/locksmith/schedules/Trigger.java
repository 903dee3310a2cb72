package dev.locksmith.schedules;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import dev.locksmith.internal.Durations;
import dev.locksmith.internal.Texts;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;

/**
 * When a schedule's occurrences are: a {@linkplain #cron(String, ZoneId) cron expression} in a
 * time zone, or a {@linkplain #every(Duration) fixed interval}. Validated when made, so a
 * trigger that exists is one the scheduler can compute.
 */
public sealed interface Trigger permits Trigger.Cron, Trigger.Interval {

    /**
     * A cron trigger; see {@link Cron}.
     *
     * @param expression 5 fields (minute hour day-of-month month day-of-week, Unix cron) or 6
     *     (second first, as Spring's {@code @Scheduled})
     * @param zone the time zone whose wall clock the expression reads
     * @return the trigger
     * @throws IllegalArgumentException naming the expression when it does not parse or never fires
     */
    static Cron cron(String expression, ZoneId zone) {
        return new Cron(expression, zone);
    }

    /**
     * A cron trigger in the time zone with this id; see {@link Cron}.
     *
     * @param expression 5 or 6 fields, see {@link #cron(String, ZoneId)}
     * @param zone a time-zone id this JVM knows ({@code Europe/Berlin}, {@code UTC},
     *     {@code +02:00})
     * @return the trigger
     * @throws IllegalArgumentException naming the zone when it is unknown, or the expression when
     *     it does not parse or never fires
     */
    static Cron cron(String expression, String zone) {
        return new Cron(expression, zoneOf(zone));
    }

    /**
     * A fixed-interval trigger; see {@link Interval}.
     *
     * @param interval at least 1 s, a whole number of milliseconds, at most 100 years
     * @return the trigger
     * @throws IllegalArgumentException when out of range
     */
    static Interval every(Duration interval) {
        return new Interval(interval);
    }

    /**
     * The first occurrence strictly after {@code instant}.
     *
     * @param instant any instant
     * @return the occurrence; empty when there is none (a cron expression whose dates ran out)
     */
    Optional<Instant> after(Instant instant);

    /**
     * The latest occurrence at or before {@code instant}.
     *
     * @param instant any instant
     * @return the occurrence; empty when there is none
     */
    Optional<Instant> atOrBefore(Instant instant);

    /**
     * Occurrences of a cron expression, read on the wall clock of {@code zone}, computed by
     * cron-utils 9.2 (its {@code UNIX} definition for 5 fields, {@code SPRING53} for 6).
     *
     * <ul>
     *   <li><b>5 fields</b>, minute hour day-of-month month day-of-week: Unix cron. When both
     *       day fields are restricted, a day matching either one fires, as in Unix cron
     *       ({@code 0 0 1 * 1}: the 1st of each month and every Monday). No {@code @daily}
     *       nicknames.</li>
     *   <li><b>6 fields</b>, second first, as Spring's {@code @Scheduled} (with {@code ?},
     *       {@code L}, {@code W}, {@code #}).</li>
     * </ul>
     *
     * <p><b>Daylight saving time</b>, as cron-utils computes it: a wall-clock time that does not
     * exist on the day the clocks go forward is skipped that day ({@code 30 2 * * *} in
     * {@code Europe/Berlin} does not fire on the last Sunday of March); a wall-clock time that
     * happens twice when the clocks go back fires once, at its first (summer-time) instant, for
     * an expression that names the hour ({@code 30 2 * * *}), and at both instants for one that
     * fires every so many minutes of every hour (<code>*&#47;30 * * * *</code> fires at 02:00 and 02:30
     * summer time, then at 02:00 and 02:30 winter time). Schedule in {@code UTC} when an
     * interval between runs must never change, or use {@link Interval}.
     *
     * @param expression the expression as given, trimmed
     * @param zone the zone; stored by its id
     */
    record Cron(String expression, ZoneId zone) implements Trigger {

        private static final CronParser FIVE_FIELDS =
                new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
        private static final CronParser SIX_FIELDS =
                new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING53));
        /** Longest expression the table holds. */
        static final int MAX_LENGTH = 256;

        /**
         * Parses {@code expression} and checks that it fires at least once.
         *
         * @param expression 5 or 6 fields, see the class description
         * @param zone the time zone
         * @throws IllegalArgumentException naming the expression when it does not parse, is longer
         *     than 256 characters, or never fires (such as {@code 0 0 30 2 *})
         * @throws NullPointerException when an argument is null
         */
        public Cron {
            Objects.requireNonNull(expression, "expression");
            Objects.requireNonNull(zone, "zone");
            expression = Texts.requireStorable("cron expression", expression.trim());
            if (expression.length() > MAX_LENGTH) {
                throw new IllegalArgumentException("cron expression must be at most " + MAX_LENGTH + " characters, was "
                        + expression.length() + ": '" + expression + "'");
            }
            ExecutionTime time = parse(expression);
            if (time.nextExecution(ZonedDateTime.now(zone)).isEmpty()) {
                throw new IllegalArgumentException("cron expression '" + expression + "' never fires");
            }
        }

        @Override
        public Optional<Instant> after(Instant instant) {
            // Occurrences are whole seconds, so the first after an instant is the first after its
            // whole second; and cron-utils keeps a fraction of a second it is given ("every
            // second" after 00:00:00.5 would be 00:00:01.5).
            return parse(expression)
                    .nextExecution(wholeSecond(instant).atZone(zone))
                    .map(ZonedDateTime::toInstant);
        }

        @Override
        public Optional<Instant> atOrBefore(Instant instant) {
            // cron-utils' lastExecution is strictly before its argument: the next whole second
            // includes every occurrence up to the instant.
            return parse(expression)
                    .lastExecution(wholeSecond(instant).plusSeconds(1).atZone(zone))
                    .map(ZonedDateTime::toInstant);
        }

        private static Instant wholeSecond(Instant instant) {
            return instant.truncatedTo(ChronoUnit.SECONDS);
        }

        private static ExecutionTime parse(String expression) {
            int fields = expression.isEmpty() ? 0 : expression.split("\\s+").length;
            if (fields != 5 && fields != 6) {
                throw new IllegalArgumentException("cron expression '" + expression + "' has " + fields
                        + " fields; expected 5 (minute hour day-of-month month day-of-week) or 6 (second first)");
            }
            try {
                return ExecutionTime.forCron((fields == 5 ? FIVE_FIELDS : SIX_FIELDS).parse(expression));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "invalid cron expression '" + expression + "': " + e.getMessage(), e);
            }
        }
    }

    /**
     * Occurrences every {@code interval}, aligned to the epoch: the instants that are a whole
     * number of intervals after 1970-01-01T00:00Z. An hourly interval fires on the hour (UTC),
     * every 5 minutes at :00, :05, ...; a new or changed schedule first fires at the next such
     * instant. Elapsed time only: daylight saving time does not move it.
     *
     * @param interval at least 1 s, a whole number of milliseconds, at most 100 years
     */
    record Interval(Duration interval) implements Trigger {

        /**
         * Checks the interval.
         *
         * @param interval at least 1 s, a whole number of milliseconds, at most 100 years
         * @throws IllegalArgumentException when out of range
         * @throws NullPointerException when null
         */
        public Interval {
            Durations.positive("interval", interval);
            if (interval.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("interval must be at least 1 s, was " + interval);
            }
            if (!interval.equals(Duration.ofMillis(interval.toMillis()))) {
                throw new IllegalArgumentException("interval must be a whole number of milliseconds, was " + interval);
            }
        }

        @Override
        public Optional<Instant> after(Instant instant) {
            return Optional.of(floor(instant).plus(interval));
        }

        @Override
        public Optional<Instant> atOrBefore(Instant instant) {
            return Optional.of(floor(instant));
        }

        private Instant floor(Instant instant) {
            long step = interval.toMillis();
            // toEpochMilli floors sub-millisecond parts (PostgreSQL's microseconds) away
            return Instant.ofEpochMilli(Math.floorDiv(instant.toEpochMilli(), step) * step);
        }
    }

    private static ZoneId zoneOf(String zone) {
        Objects.requireNonNull(zone, "zone");
        try {
            return ZoneId.of(zone);
        } catch (DateTimeException e) {
            throw new IllegalArgumentException("unknown time zone '" + zone + "': " + e.getMessage(), e);
        }
    }
}

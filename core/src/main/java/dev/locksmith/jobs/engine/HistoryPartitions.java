package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOB_HISTORY;

import dev.locksmith.LockWait;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.internal.Errors;
import java.time.Duration;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.Name;
import org.jooq.Record2;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * The partitions of {@code job_history}, which are named for the UTC days they hold:
 * {@code job_history_p20261126} holds jobs finished on 2026-11-26 (UTC), and
 * {@code job_history_p20250101_20261127} (made by the upgrade for the finished rows it moved)
 * every day from the first date up to, not including, the second. {@code job_history_default}
 * catches a finish on a day with no partition. Every partition name is made here from a date and
 * quoted by jOOQ; only names of this shape are read back, and none is dropped but those.
 * <b>Internal: not API.</b>
 */
final class HistoryPartitions {

    /** The default partition's name. */
    static final String DEFAULT = "job_history_default";

    private static final Pattern NAME = Pattern.compile("job_history_p(\\d{8})(?:_(\\d{8}))?");
    private static final DateTimeFormatter DAY = DateTimeFormatter.BASIC_ISO_DATE;

    /**
     * Key of the transaction-scoped advisory lock that serializes partition changes across
     * workers ({@code pg_advisory_xact_lock(bigint)}): the bytes of "lsmhist" as a number.
     */
    private static final long LOCK_KEY = 0x6c736d68697374L;

    /**
     * How long a partition change waits for its table locks: dropping a partition takes an ACCESS
     * EXCLUSIVE lock on the parent, which finishing jobs (inserts into the parent) then queue
     * behind. A change that cannot have its locks soon is left to the next pass.
     */
    private static final LockWait DDL_WAIT = LockWait.upTo(Duration.ofSeconds(2));

    /**
     * One partition of a range of days.
     *
     * @param name its table name
     * @param from its first day (UTC)
     * @param to the day after its last (UTC)
     */
    record Partition(String name, LocalDate from, LocalDate to) {

        /** The partition named {@code name}, if it is one of this shape. */
        static Optional<Partition> of(String name) {
            Matcher m = NAME.matcher(name);
            if (!m.matches()) {
                return Optional.empty();
            }
            LocalDate from = LocalDate.parse(m.group(1), DAY);
            LocalDate to = m.group(2) == null ? from.plusDays(1) : LocalDate.parse(m.group(2), DAY);
            return Optional.of(new Partition(name, from, to));
        }

        /** The partition of one day. */
        static Partition day(LocalDate day) {
            return new Partition("job_history_p" + DAY.format(day), day, day.plusDays(1));
        }

        OffsetDateTime lower() {
            return from.atStartOfDay().atOffset(ZoneOffset.UTC);
        }

        OffsetDateTime upper() {
            return to.atStartOfDay().atOffset(ZoneOffset.UTC);
        }

        boolean covers(LocalDate day) {
            return !day.isBefore(from) && day.isBefore(to);
        }
    }

    private final QueueContext context;

    HistoryPartitions(QueueContext context) {
        this.context = context;
    }

    /** The day partitions (and the upgrade's range partition), oldest first; not the default. */
    List<Partition> list() {
        List<String> names = Errors.translating(() -> context.dsl
                .resultQuery(
                        "SELECT c.relname::text FROM pg_catalog.pg_inherits i "
                                + "JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = {0}",
                        regclass())
                .fetch(0, String.class));
        List<Partition> result = new ArrayList<>();
        for (String name : names) {
            Partition.of(name).ifPresent(result::add);
        }
        result.sort(Comparator.comparing(Partition::from));
        return result;
    }

    /** Today's date in UTC on the database clock. */
    LocalDate today() {
        return Errors.translating(() -> context.dsl
                .select(DSL.field("(now() AT TIME ZONE 'UTC')::date", LocalDate.class))
                .fetchSingle()
                .value1());
    }

    /**
     * Creates the partitions of the days from today through {@code daysAhead} days on that no
     * partition covers yet. Rows the default partition holds for such a day (finished while the
     * day had no partition) move into the new partition in the same transaction.
     *
     * @return how many partitions were created
     */
    int prepare(int daysAhead) {
        LocalDate today = today();
        List<Partition> existing = list();
        int created = 0;
        for (int i = 0; i <= daysAhead; i++) {
            LocalDate day = today.plusDays(i);
            if (existing.stream().noneMatch(p -> p.covers(day)) && create(Partition.day(day))) {
                created++;
            }
        }
        return created;
    }

    /**
     * Creates one day's partition, serialized with other workers by an advisory lock, and only if
     * it is still missing once the lock is held.
     */
    private boolean create(Partition p) {
        Name table = DSL.name(context.schema.schema(), p.name());
        Name fallback = DSL.name(context.schema.schema(), DEFAULT);
        try {
            return Errors.translating(() -> context.dsl.transactionResult(c -> DDL_WAIT.run(c.dsl(), () -> {
                DSLContext tx = c.dsl();
                tx.select(DSL.field("pg_advisory_xact_lock({0})", Object.class, DSL.val(LOCK_KEY)))
                        .fetch();
                if (tx.fetchValue(
                        DSL.field("to_regclass({0}) IS NOT NULL", Boolean.class, DSL.val(tx.render(table))))) {
                    return false;
                }
                // No finish from here to the commit: one that landed in the default partition after
                // the check below would make CREATE ... PARTITION OF fail (the default would hold a
                // row of the new partition's range). The parent is locked, as a finish locks it,
                // before any partition, so that a transaction finishing several jobs and this one
                // never wait for each other in a cycle. Reads go on; the lock is held for the
                // catalog change (and the move of a day's stray rows), within DDL_WAIT to get it.
                tx.execute(DSL.query("LOCK TABLE {0} IN SHARE ROW EXCLUSIVE MODE", JOB_HISTORY));
                boolean stranded = tx.fetchExists(DSL.selectOne()
                        .from(DSL.table(fallback))
                        .where(DSL.field(DSL.name("finished_at")).ge(DSL.val(p.lower())))
                        .and(DSL.field(DSL.name("finished_at")).lt(DSL.val(p.upper()))));
                if (!stranded) {
                    tx.execute(DSL.query(
                            "CREATE TABLE {0} PARTITION OF {1} FOR VALUES FROM ({2}) TO ({3})",
                            table, JOB_HISTORY, DSL.inline(bound(p.lower())), DSL.inline(bound(p.upper()))));
                    return true;
                }
                // The default partition holds rows of this day: a partition for it cannot be
                // created while they are there. Move the day's rows into a new table and attach it.
                tx.execute(DSL.query(
                        "CREATE TABLE {0} (LIKE {1} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)", table, JOB_HISTORY));
                tx.execute(DSL.query(
                        "WITH moved AS (DELETE FROM {0} WHERE finished_at >= {1} AND finished_at < {2} RETURNING *) "
                                + "INSERT INTO {3} SELECT * FROM moved",
                        DSL.table(fallback), DSL.val(p.lower()), DSL.val(p.upper()), DSL.table(table)));
                tx.execute(DSL.query(
                        "ALTER TABLE {0} ATTACH PARTITION {1} FOR VALUES FROM ({2}) TO ({3})",
                        JOB_HISTORY, DSL.table(table), DSL.inline(bound(p.lower())), DSL.inline(bound(p.upper()))));
                return true;
            })));
        } catch (LockNotAvailableException busy) {
            return false;
        }
    }

    /**
     * Drops the partitions whose every day ends at or before {@code cutoff}, each in a transaction
     * of its own that waits at most {@link #DDL_WAIT} for its locks (one it cannot have is left
     * for the next call).
     *
     * @return the partitions dropped and the rows they held by the statistics
     *     ({@code pg_class.reltuples}, an estimate; 0 where never analyzed)
     */
    Dropped dropBefore(OffsetDateTime cutoff) {
        int partitions = 0;
        long rows = 0;
        for (Partition p : list()) {
            if (p.upper().isAfter(cutoff)) {
                continue;
            }
            Name table = DSL.name(context.schema.schema(), p.name());
            try {
                Long estimate =
                        Errors.translating(() -> context.dsl.transactionResult(c -> DDL_WAIT.run(c.dsl(), () -> {
                            DSLContext tx = c.dsl();
                            tx.select(DSL.field("pg_advisory_xact_lock({0})", Object.class, DSL.val(LOCK_KEY)))
                                    .fetch();
                            @Nullable
                            Record2<Boolean, Long> found = tx.select(
                                            DSL.field(
                                                    "to_regclass({0}) IS NOT NULL",
                                                    Boolean.class, DSL.val(tx.render(table))),
                                            DSL.field(
                                                    "(SELECT greatest(reltuples, 0)::bigint FROM pg_catalog.pg_class "
                                                            + "WHERE oid = to_regclass({0}))",
                                                    Long.class, DSL.val(tx.render(table))))
                                    .fetchOne();
                            if (found == null || !Boolean.TRUE.equals(found.value1())) {
                                return -1L;
                            }
                            tx.execute(DSL.query("DROP TABLE {0}", DSL.table(table)));
                            return found.value2() == null ? 0L : found.value2();
                        })));
                if (estimate >= 0) {
                    partitions++;
                    rows += estimate;
                }
            } catch (LockNotAvailableException busy) {
                // in use (a long query on the history): the next call drops it
            }
        }
        return new Dropped(partitions, rows);
    }

    /**
     * What {@link #dropBefore} dropped.
     *
     * @param partitions how many partitions
     * @param estimatedRows their rows by the statistics
     */
    record Dropped(int partitions, long estimatedRows) {}

    /**
     * The rows of {@code job_history} by the statistics ({@code pg_class.reltuples} of every
     * partition, the default's included; never-analyzed partitions count 0), and how many day
     * partitions there are: catalog reads only, whatever the table holds.
     */
    Record2<Long, Integer> estimate() {
        return Errors.translating(() -> context.dsl
                .select(
                        DSL.field(
                                "coalesce((SELECT sum(greatest(c.reltuples, 0))::bigint FROM pg_catalog.pg_inherits i "
                                        + "JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = {0}), 0)",
                                Long.class, regclass()),
                        DSL.field(
                                "(SELECT count(*)::int FROM pg_catalog.pg_inherits i WHERE i.inhparent = {0})",
                                Integer.class, regclass()))
                .fetchSingle());
    }

    private org.jooq.Field<Object> regclass() {
        return DSL.field("{0}::regclass", Object.class, DSL.val(context.dsl.render(JOB_HISTORY)));
    }

    /** A partition bound: {@code 2026-11-26 00:00:00+00}, a timestamptz literal that no setting reinterprets. */
    private static String bound(OffsetDateTime t) {
        return t.toLocalDate() + " 00:00:00+00";
    }
}

package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;

import dev.locksmith.internal.Durations;
import dev.locksmith.internal.Errors;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.jooq.Condition;
import org.jooq.Field;
import org.jooq.Record2;
import org.jooq.impl.DSL;
import org.jooq.types.DayToSecond;
import org.slf4j.Logger;

/**
 * Keeping the jobs table healthy: rescuing expired leases, deleting old finished jobs in
 * batches, and the table's vacuum (whether autovacuum cleans it, and a VACUUM when it has many
 * dead rows). Each statement runs on the queue's own context, auto-committed.
 * <b>Internal: not API.</b>
 */
public final class Maintenance {

    private static final int RESCUE_BATCH = 1000;

    /** Autovacuum problems already logged by a worker of this class loader: each once. */
    private static final Set<String> AUTOVACUUM_WARNED = ConcurrentHashMap.newKeySet();

    private final QueueContext context;
    private final HistoryPartitions partitions;

    Maintenance(QueueContext context) {
        this.context = context;
        this.partitions = new HistoryPartitions(context);
    }

    /**
     * Creates the partitions of {@code job_history} for today and the next {@code daysAhead} days
     * (UTC, database clock) that do not exist yet, moving into each the rows the default partition
     * holds for its day. Serialized across workers by a transaction-scoped advisory lock; a
     * partition whose locks are not granted within two seconds is left for the next call.
     *
     * @param daysAhead days after today, 0 to 31
     * @return how many partitions were created
     */
    public int prepareHistory(int daysAhead) {
        if (daysAhead < 0 || daysAhead > 31) {
            throw new IllegalArgumentException("daysAhead must be between 0 and 31, was " + daysAhead);
        }
        return partitions.prepare(daysAhead);
    }

    /**
     * The size of {@code job_history} by the statistics: catalog reads only.
     *
     * @return estimated rows (pg_class.reltuples summed over the partitions) and partition count
     */
    public Record2<Long, Integer> historyEstimate() {
        return partitions.estimate();
    }

    /**
     * Returns running jobs whose lease has expired to {@code pending} (or to {@code failed} when
     * they have used all their attempts), in batches of 1,000 skipping rows being changed right
     * now; each batch its own auto-committed statement.
     *
     * @return how many jobs were rescued
     */
    public int rescueExpired() {
        int total = 0;
        int batch;
        Map<String, int[]> byQueue = new TreeMap<>();
        // On Citus a statement that locks rows must name one shard: one pass per shard. The
        // exhausted jobs move to job_history (failed for good), the others become pending again:
        // one statement each.
        int distributed = context.shards(context.dsl);
        List<Condition> scopes = distributed == 0
                ? List.of(DSL.noCondition())
                : IntStream.range(0, distributed).mapToObj(JOBS.SHARD::eq).toList();
        for (Condition scope : scopes) {
            for (boolean exhausted : new boolean[] {true, false}) {
                do {
                    List<String> queues = rescueBatch(scope, exhausted);
                    batch = queues.size();
                    queues.forEach(q -> byQueue.computeIfAbsent(q, k -> new int[2])[exhausted ? 1 : 0]++);
                    total += batch;
                } while (batch == RESCUE_BATCH);
            }
        }
        byQueue.forEach((queue, counts) -> context.observing.jobsRescued(queue, counts[0], counts[1]));
        return total;
    }

    /**
     * One batch of expired leases in {@code scope}: those that used their last attempt moved to
     * {@code job_history} as failed ({@code exhausted}), or the others made pending again.
     *
     * @return the queue of each job rescued
     */
    private List<String> rescueBatch(Condition scope, boolean exhausted) {
        Condition used = JOBS.ATTEMPTS.ge(JOBS.MAX_ATTEMPTS);
        Condition which = scope.and(JOBS.ID.in(context.dsl
                .select(JOBS.ID)
                .from(JOBS)
                .where(scope)
                .and(JOBS.STATUS.eq(Sql.RUNNING).and(JOBS.LOCKED_UNTIL.lt(DSL.currentOffsetDateTime())))
                .and(exhausted ? used : used.not())
                .limit(RESCUE_BATCH)
                .forUpdate()
                .skipLocked()));
        Field<String> lastError = DSL.concat(DSL.val("lease of "), JOBS.LOCKED_BY, DSL.val(" expired"));
        if (exhausted) {
            return Errors.translating(() -> History.move(context.dsl, which, History.finishing(Sql.FAILED, lastError))
                    .returning(JOB_HISTORY.QUEUE)
                    .fetch(JOB_HISTORY.QUEUE));
        }
        return Errors.translating(() -> context.dsl
                .update(JOBS)
                .set(JOBS.STATUS, Sql.PENDING)
                .set(JOBS.LAST_ERROR, lastError)
                .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
                .setNull(JOBS.LOCKED_BY)
                .setNull(JOBS.LOCKED_UNTIL)
                .setNull(JOBS.LEASE_ID)
                .where(which)
                .returning(JOBS.QUEUE)
                .fetch(JOBS.QUEUE));
    }

    /**
     * Expires finished jobs that finished more than {@code age} ago: drops the partitions of
     * {@code job_history} whose every day is older than that, then deletes the older rows left in
     * the partition that straddles the boundary (and in the default partition), and any finished
     * rows left in {@code jobs} by a library from before the history table, {@code batchSize}
     * rows per auto-committed statement.
     *
     * @return rows deleted by statement, plus the rows of the dropped partitions by the statistics
     */
    public int deleteFinishedOlderThan(Duration age, int batchSize) {
        Duration minAge = Durations.nonNegative("age", age);
        if (batchSize < 1 || batchSize > 100_000) {
            throw new IllegalArgumentException("batchSize must be between 1 and 100000, was " + batchSize);
        }
        OffsetDateTime cutoff = Errors.translating(() -> context.dsl
                .select(DSL.currentOffsetDateTime().minus(DSL.val(DayToSecond.valueOf(minAge))))
                .fetchSingle()
                .value1());
        long total = partitions.dropBefore(cutoff).estimatedRows();
        int batch;
        do {
            batch = Errors.translating(() -> context.dsl
                    .deleteFrom(JOB_HISTORY)
                    .where(DSL.row(JOB_HISTORY.ID, JOB_HISTORY.FINISHED_AT)
                            .in(context.dsl
                                    .select(JOB_HISTORY.ID, JOB_HISTORY.FINISHED_AT)
                                    .from(JOB_HISTORY)
                                    .where(JOB_HISTORY.FINISHED_AT.lt(cutoff))
                                    .limit(batchSize)))
                    .execute());
            total += batch;
        } while (batch == batchSize);
        do {
            batch = Errors.translating(() -> context.dsl
                    .deleteFrom(JOBS)
                    .where(JOBS.ID.in(context.dsl
                            .select(JOBS.ID)
                            .from(JOBS)
                            .where(JOBS.STATUS.in(Sql.FINISHED))
                            .and(JOBS.FINISHED_AT.lt(cutoff))
                            .limit(batchSize)))
                    .execute());
            total += batch;
        } while (batch == batchSize);
        return (int) Math.min(Integer.MAX_VALUE, total);
    }

    /**
     * Why autovacuum will not clean the jobs table, if it will not: it is off for the server or
     * for the table. One read-only statement.
     *
     * @return the reason, or empty when autovacuum runs for the table
     */
    public Optional<String> autovacuumProblem() {
        String table = context.dsl.render(JOBS);
        return Errors.translating(() -> {
            Record2<String, String> row = context.dsl
                    .select(
                            DSL.field("current_setting('autovacuum')", String.class),
                            // the table's own setting, or (jobs partitioned into generations) its
                            // partitions': one that is off ('false' and 'off' sort first) is the answer
                            DSL.field(
                                    "(SELECT o.option_value FROM pg_class c, pg_options_to_table(c.reloptions) o "
                                            + "WHERE (c.oid = {0} OR c.oid IN (SELECT i.inhrelid FROM pg_inherits i "
                                            + "WHERE i.inhparent = {0})) AND o.option_name = 'autovacuum_enabled' "
                                            + "ORDER BY o.option_value LIMIT 1)",
                                    String.class, context.distribution.regclass()))
                    .fetchSingle();
            if (!"on".equals(row.value1())) {
                return Optional.of("autovacuum is off on the server (autovacuum = " + row.value1() + "): the dead rows "
                        + "of " + table
                        + " are removed only by the workers' own VACUUM (vacuumInterval, on by default) and "
                        + "nothing analyzes or freezes it; turn autovacuum on");
            }
            if (row.value2() != null && !Boolean.parseBoolean(row.value2()) && !"on".equals(row.value2())) {
                return Optional.of("autovacuum is off for " + table + " (autovacuum_enabled = " + row.value2()
                        + "): its dead rows are removed only by the workers' own VACUUM (vacuumInterval, on by "
                        + "default) and nothing analyzes or freezes it; turn autovacuum on for it");
            }
            return Optional.empty();
        });
    }

    /**
     * Logs {@link #autovacuumProblem()} at WARN, if any, once per reason (several workers start at
     * once); a failure to find out at DEBUG.
     *
     * @param log the worker's logger
     */
    public void warnIfNotVacuumed(Logger log) {
        try {
            autovacuumProblem().filter(AUTOVACUUM_WARNED::add).ifPresent(log::warn);
        } catch (RuntimeException e) {
            log.debug("could not read the autovacuum settings", e);
        }
    }

    /**
     * What {@link #vacuumIfDead} found: the table's dead rows (from the statistics), and whether
     * it was vacuumed, or could not be because the connection's role does not own it.
     *
     * @param deadRows dead rows counted by the statistics
     * @param vacuumed whether a VACUUM ran
     * @param notOwner whether the role may not vacuum the table
     */
    public record VacuumCheck(long deadRows, boolean vacuumed, boolean notOwner) {}

    /**
     * Runs {@code VACUUM (SKIP_LOCKED, TRUNCATE false)} on the jobs table when the statistics
     * count at least {@code minDeadRows} dead rows in it and the connection's role may vacuum it.
     * {@code SKIP_LOCKED} skips the table while another VACUUM holds it; no truncation, because
     * truncating takes an ACCESS EXCLUSIVE lock that claims wait for, and on a busy queue VACUUM
     * spends five more seconds trying to get it. Must run outside a transaction; a connection that
     * does not auto-commit is switched to auto-commit for the statement and back.
     *
     * @param minDeadRows vacuum from this many dead rows
     * @return what it found and did
     */
    public VacuumCheck vacuumIfDead(long minDeadRows) {
        return Errors.translating(() -> {
            // Who may VACUUM a table: its owner, the database's owner, a superuser (all three
            // through pg_has_role), and from PostgreSQL 17 whoever has MAINTAIN on it.
            Record2<Long, Boolean> row = context.dsl
                    .select(
                            // jobs is partitioned into generations: its dead rows are its partitions'
                            DSL.field(
                                    "pg_stat_get_dead_tuples(c.oid) + coalesce((SELECT sum(pg_stat_get_dead_tuples("
                                            + "i.inhrelid)) FROM pg_inherits i WHERE i.inhparent = c.oid), 0)::bigint",
                                    Long.class),
                            DSL.field(
                                    "pg_has_role(c.relowner, 'USAGE') OR pg_has_role((SELECT datdba FROM "
                                            + "pg_database WHERE datname = current_database()), 'USAGE') OR CASE "
                                            + "WHEN current_setting('server_version_num')::int >= 170000 "
                                            + "THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END",
                                    Boolean.class))
                    .from(DSL.table("pg_class").as("c"))
                    .where(DSL.field("c.oid").eq(context.distribution.regclass()))
                    .fetchOne();
            if (row == null) {
                return new VacuumCheck(0, false, false);
            }
            long dead = row.value1() == null ? 0 : row.value1();
            if (dead < minDeadRows) {
                return new VacuumCheck(dead, false, false);
            }
            if (!Boolean.TRUE.equals(row.value2())) {
                return new VacuumCheck(dead, false, true);
            }
            String vacuum = context.dsl.render(DSL.query("VACUUM (SKIP_LOCKED, TRUNCATE false) {0}", JOBS));
            // VACUUM cannot run in a transaction block: on a connection that does not
            // auto-commit (a pool configured so), auto-commit it for this one statement.
            context.dsl.connection(c -> {
                boolean autoCommit = c.getAutoCommit();
                if (!autoCommit) {
                    c.setAutoCommit(true);
                }
                try (java.sql.Statement statement = c.createStatement()) {
                    statement.execute(vacuum);
                } finally {
                    if (!autoCommit) {
                        c.setAutoCommit(false);
                    }
                }
            });
            return new VacuumCheck(dead, true, false);
        });
    }
}

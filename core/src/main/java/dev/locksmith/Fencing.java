package dev.locksmith;

import dev.locksmith.internal.Errors;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Table;

/**
 * Writes guarded by a fencing token, so that a holder whose lease lapsed cannot overwrite the
 * work of the holder after it.
 *
 * <p>A lease ends by the clock, not when its holder notices: a holder that pauses (a long GC, a
 * partition, a suspended VM) past its lease may wake up and write after another holder took the
 * job or account over. Every lease locksmith hands out carries a number that only grows per job
 * ({@link dev.locksmith.jobs.Job#fence()}) and per account
 * ({@link dev.locksmith.pool.ChannelAccount#fence()}). Store the number of the last write beside
 * what the lease protects (a {@code bigint} column, null or 0 before the first write), and let
 * each write through only where its number is not smaller than the stored one: a stale holder's
 * write then changes nothing, whenever it arrives.
 *
 * <p>The numbers order the holders of <em>one</em> job, or of one account: numbers of different
 * jobs say nothing about each other. Fence what only that job writes (its own result row, keyed
 * by the job's id), or what only the holders of that account write.
 *
 * <pre>{@code
 * // in the handler of a leased job: its result row remembers the fence of its last write
 * boolean written = Fencing.update(tx, RESULTS, RESULTS.LAST_FENCE, job.fence(),
 *         Map.of(RESULTS.STATE, "synced"), RESULTS.JOB_ID.eq(job.id())) == 1;
 * if (!written) {
 *     // a newer holder of this job has written (or the row is gone): give up, do not retry
 * }
 * }</pre>
 *
 * <p>The check and the write are one statement, so no other write can come between them: two
 * holders writing at once are ordered by the row lock the UPDATE takes, and the second sees the
 * first's number. A holder writes as often as it likes with its own number (equal numbers pass).
 * In READ COMMITTED (the default) the second writer waits for the first's commit and then
 * re-checks the row; in REPEATABLE READ or SERIALIZABLE it fails with a serialization error
 * instead ({@link dev.locksmith.exception.SerializationFailureException}), to be retried as a
 * whole transaction. Works on a plain PostgreSQL or Citus table (name the distribution column in
 * {@code where} to keep the statement on one node).
 */
public final class Fencing {

    private Fencing() {}

    /**
     * Whether a write stamped {@code fence} may replace what {@code lastFence} records:
     * {@code lastFence IS NULL OR lastFence <= fence}. Add it to an UPDATE that also sets
     * {@code lastFence} to {@code fence}, or use {@link #update}.
     *
     * @param lastFence the column holding the number of the last write
     * @param fence the writer's fencing token
     * @return the condition
     * @throws IllegalArgumentException when {@code fence} is negative
     * @throws NullPointerException when {@code lastFence} is null
     */
    public static Condition admits(Field<Long> lastFence, long fence) {
        Objects.requireNonNull(lastFence, "lastFence");
        requireValid(fence);
        return lastFence.isNull().or(lastFence.le(fence));
    }

    /**
     * {@code UPDATE table SET <values>, lastFence = fence WHERE <where> AND (lastFence IS NULL OR
     * lastFence <= fence)} in the caller's transaction: writes {@code values} only where no write
     * with a larger token came first.
     *
     * @param tx the transaction (or auto-committing context) to run in
     * @param table the table holding what the lease protects
     * @param lastFence its column recording the token of the last write
     * @param fence the writer's token ({@link dev.locksmith.jobs.Job#fence()},
     *     {@link dev.locksmith.pool.ChannelAccount#fence()})
     * @param values the columns to write and their values (values or jOOQ fields); not
     *     {@code lastFence}, which this sets
     * @param where the rows to write, for example the protected row's key
     * @return the rows written: 0 when none matched {@code where} or a newer token has written
     *     them (a stale holder: stop, do not retry; read the row if the two must be told apart)
     * @throws IllegalArgumentException when {@code fence} is negative, {@code values} is empty or
     *     names {@code lastFence}, or {@code table} lists its columns and {@code lastFence} is not
     *     one; nothing is written then
     * @throws NullPointerException when an argument, or a column of {@code values}, is null
     * @throws dev.locksmith.exception.LocksmithException for database failures (a lock timeout, a
     *     serialization failure), translated as every locksmith call does
     */
    public static int update(
            DSLContext tx,
            Table<?> table,
            Field<Long> lastFence,
            long fence,
            Map<? extends Field<?>, ?> values,
            Condition where) {
        Objects.requireNonNull(tx, "tx");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(lastFence, "lastFence");
        Objects.requireNonNull(values, "values");
        Objects.requireNonNull(where, "where");
        requireValid(fence);
        // a table that knows its columns (generated) must have it; a plain DSL.table(name) cannot tell
        if (table.fields().length > 0 && table.field(lastFence.getName()) == null) {
            throw new IllegalArgumentException(
                    "lastFence " + lastFence.getName() + " is not a column of " + table.getName());
        }
        if (values.isEmpty()) {
            throw new IllegalArgumentException("values must name at least one column to write");
        }
        Map<Field<?>, Object> set = new LinkedHashMap<>();
        for (Map.Entry<? extends Field<?>, ?> e : values.entrySet()) {
            Field<?> column = Objects.requireNonNull(e.getKey(), "a column of values");
            if (column.getName().equals(lastFence.getName())) {
                throw new IllegalArgumentException(
                        "values must not set " + lastFence.getName() + ": update sets it to the fence");
            }
            set.put(column, e.getValue());
        }
        set.put(lastFence, fence);
        Condition admitted = admits(lastFence, fence);
        return Errors.translating(
                () -> tx.update(table).set(set).where(where).and(admitted).execute());
    }

    private static void requireValid(long fence) {
        if (fence < 0) {
            throw new IllegalArgumentException("fence must be 0 or more, was " + fence);
        }
    }
}

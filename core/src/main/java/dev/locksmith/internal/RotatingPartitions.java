package dev.locksmith.internal;

import dev.locksmith.LockWait;
import dev.locksmith.exception.LockNotAvailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Name;
import org.jooq.Record;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;

/**
 * A table partitioned by {@code slot} into {@link #SLOTS} partitions ({@code <table>_slot0} to
 * {@code <table>_slot3}) that new rows enter by generation: the slot is a sequence's last value
 * modulo {@link #SLOTS} (the column's default), and rows leave a slot that is not current by
 * {@code TRUNCATE} once it holds none, which, unlike VACUUM, no snapshot holds back. This is what
 * every such table shares: where it lives, how full each slot is, emptying a slot without losing
 * a row, and moving the generation on. What fills a slot, when to move on and what to do with
 * the rows that stay behind is the table's own ({@code jobs}: the queue's {@code Generations};
 * {@code channel_account_leases}: the pool's lease generations). Safe to use from any number of
 * threads and JVMs at once. <b>Internal: not API.</b>
 */
public final class RotatingPartitions {

    /** The partitions: the slot is the generation modulo this. */
    public static final int SLOTS = 4;

    /** How long a TRUNCATE waits for its partition's lock: statements on the table queue behind it meanwhile. */
    public static final LockWait LOCK_WAIT = LockWait.upTo(Duration.ofMillis(20));

    /**
     * The first wait before a partition that held rows, or whose lock was not had in time, is
     * looked at again; doubled each time up to {@link #MAX_BACKOFF_NANOS}.
     */
    private static final long MIN_BACKOFF_NANOS = Duration.ofMillis(250).toNanos();

    private static final long MAX_BACKOFF_NANOS = Duration.ofSeconds(2).toNanos();

    private final DSLContext dsl;
    private final String table;
    private final String tableName;
    private final String sequenceName;
    private final long lockKey;
    private final AtomicLongArray retryAt = new AtomicLongArray(SLOTS);
    private final AtomicLongArray backoff = new AtomicLongArray(SLOTS);
    private volatile @Nullable Layout layout;

    /** Where the partitions live, looked up once: null schema when the table is not partitioned. */
    private record Layout(@Nullable String schema) {}

    /**
     * @param dsl runs the statements (its own transactions) and renders {@code table} with its
     *     settings (the schema mapping)
     * @param table the partitioned table
     * @param sequence the name (in the table's schema) of the sequence whose last value is the generation
     * @param lockKey the advisory lock that serializes moving the generation on
     */
    public RotatingPartitions(DSLContext dsl, Table<?> table, String sequence, long lockKey) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
        this.table = dsl.render(Objects.requireNonNull(table, "table"));
        this.tableName = table.getName();
        this.sequenceName = Objects.requireNonNull(sequence, "sequence");
        this.lockKey = lockKey;
    }

    /**
     * The current generation and each partition's size in bytes, by slot.
     *
     * @param generation the sequence's last value
     * @param bytes each slot's partition size
     * @param catalogPages each slot's size in pages as the catalog last recorded it (VACUUM,
     *     ANALYZE), 0 when never: what the planner last planned with
     */
    public record State(long generation, List<Long> bytes, List<Integer> catalogPages) {

        /** {@return the slot new rows go to} */
        public int current() {
            return (int) (generation % SLOTS);
        }

        /** {@return the size of the current slot's partition} */
        public long currentBytes() {
            return bytes.get(current());
        }
    }

    /**
     * What {@link #advance} did.
     *
     * @param generation the current generation after it
     * @param advanced whether the generation moved
     * @param moved what {@code makeRoom} reported (0 when it did not run)
     */
    public record Advance(long generation, boolean advanced, int moved) {}

    /** Makes room in the oldest slot when no slot is empty, in the turner's transaction. */
    @FunctionalInterface
    public interface MakeRoom {
        /**
         * Empties what it can of the oldest slot into the current one.
         *
         * @param tx the transaction holding the turn's advisory lock
         * @param oldest the slot of the oldest generation
         * @param current the current slot
         * @return how many rows it moved or dropped
         */
        int makeRoom(DSLContext tx, int oldest, int current);
    }

    /**
     * The table's schema when it is partitioned (looked up once), or null (not partitioned: a
     * layout without generations, such as Citus's for jobs, or a table not created yet).
     *
     * @return the schema, or null
     */
    public @Nullable String schema() {
        Layout known = layout;
        if (known == null) {
            String schema = Errors.translating(() -> dsl.select(DSL.field("n.nspname", String.class))
                    .from(DSL.table("pg_catalog.pg_class").as("c"))
                    .join(DSL.table("pg_catalog.pg_namespace").as("n"))
                    .on(DSL.field("n.oid").eq(DSL.field("c.relnamespace")))
                    .where(DSL.field("c.oid").eq(DSL.field("to_regclass({0})", Object.class, DSL.val(table))))
                    .and(DSL.field("c.relkind").eq(DSL.inline("p")))
                    .fetchOne(0, String.class));
            known = new Layout(schema);
            layout = known;
        }
        return known.schema();
    }

    /**
     * Reads the generation and the partitions' sizes.
     *
     * @param ctx where to read
     * @param schema {@link #schema()}
     * @return the state
     */
    public State state(DSLContext ctx, String schema) {
        List<Field<?>> fields = new ArrayList<>();
        fields.add(DSL.field(
                "coalesce(pg_sequence_last_value(to_regclass({0})), 0)",
                SQLDataType.BIGINT, DSL.val(sequence(schema))));
        for (int slot = 0; slot < SLOTS; slot++) {
            String partition = ctx.render(partition(schema, slot));
            fields.add(DSL.field(
                    "coalesce(pg_relation_size(to_regclass({0})), 0)", SQLDataType.BIGINT, DSL.val(partition)));
            fields.add(DSL.field(
                    "coalesce((SELECT relpages FROM pg_catalog.pg_class WHERE oid = to_regclass({0})), 0)",
                    SQLDataType.INTEGER, DSL.val(partition)));
        }
        Record row = Errors.translating(() -> ctx.select(fields).fetchSingle());
        List<Long> bytes = new ArrayList<>(SLOTS);
        List<Integer> pages = new ArrayList<>(SLOTS);
        for (int slot = 0; slot < SLOTS; slot++) {
            bytes.add(row.get(1 + 2 * slot, Long.class));
            pages.add(row.get(2 + 2 * slot, Integer.class));
        }
        return new State(row.get(0, Long.class), List.copyOf(bytes), List.copyOf(pages));
    }

    /**
     * Empties every partition that is not current, has pages, holds no row that {@code kept}
     * matches, and is due for a look (see {@link #truncate}).
     *
     * @param schema {@link #schema()}
     * @param state the state read just before
     * @param kept the rows that must not be lost (every row: {@link DSL#noCondition()}); the
     *     others are dropped with the partition
     * @return how many were emptied
     */
    public int truncateEmpty(String schema, State state, Condition kept) {
        int emptied = 0;
        for (int slot = 0; slot < SLOTS; slot++) {
            if (slot != state.current() && state.bytes().get(slot) > 0 && due(slot) && truncate(schema, slot, kept)) {
                emptied++;
            }
        }
        return emptied;
    }

    /**
     * Empties one partition if it holds no row {@code kept} matches: a look without locks first
     * (most partitions that hold such rows are seen so at no cost to other statements), then under
     * the partition's ACCESS EXCLUSIVE lock, had within {@link #LOCK_WAIT}, the look again, and
     * TRUNCATE. A partition that still held such rows, or whose lock was not had in time, is
     * looked at again later, less often each time.
     */
    private boolean truncate(String schema, int slot, Condition kept) {
        Table<?> partition = DSL.table(partition(schema, slot));
        boolean done;
        try {
            done = !Errors.translating(() ->
                            dsl.fetchExists(DSL.selectOne().from(partition).where(kept)))
                    && Errors.translating(() -> dsl.transactionResult(c -> {
                        // READ COMMITTED whatever the pool's default: the look under the lock must
                        // see every row committed before the lock was had, and LockWait's first
                        // statement would fix a REPEATABLE READ snapshot before the LOCK.
                        c.dsl().execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
                        return LOCK_WAIT.run(c.dsl(), () -> {
                            DSLContext tx = c.dsl();
                            tx.execute(DSL.query("LOCK TABLE {0} IN ACCESS EXCLUSIVE MODE", partition));
                            if (tx.fetchExists(DSL.selectOne().from(partition).where(kept))) {
                                return false;
                            }
                            tx.execute(DSL.query("TRUNCATE {0}", partition));
                            return true;
                        });
                    }));
        } catch (LockNotAvailableException busy) {
            done = false;
        }
        if (done) {
            backoff.set(slot, 0);
        } else {
            long wait = Math.min(MAX_BACKOFF_NANOS, Math.max(MIN_BACKOFF_NANOS, backoff.get(slot) * 2));
            backoff.set(slot, wait);
            retryAt.set(slot, System.nanoTime() + wait);
        }
        return done;
    }

    private boolean due(int slot) {
        return backoff.get(slot) == 0 || System.nanoTime() - retryAt.get(slot) >= 0;
    }

    /**
     * Moves the generation on to the next empty slot, in a transaction of its own under an
     * advisory lock (so that two turners never both move it; one that does not get the lock does
     * nothing); when no slot ahead is empty, {@code makeRoom} runs on the oldest slot instead.
     *
     * @param schema {@link #schema()}
     * @param before the state the caller decided on
     * @param makeRoom what to do with the oldest slot when no slot is empty
     * @return what it did
     */
    public Advance advance(String schema, State before, MakeRoom makeRoom) {
        return Errors.translating(() -> dsl.transactionResult(c -> {
            DSLContext tx = c.dsl();
            if (!tx.fetchValue(DSL.field("pg_try_advisory_xact_lock({0})", Boolean.class, DSL.val(lockKey)))) {
                return new Advance(before.generation(), false, 0);
            }
            State now = state(tx, schema);
            for (int ahead = 1; ahead < SLOTS; ahead++) {
                int slot = (int) ((now.generation() + ahead) % SLOTS);
                if (now.bytes().get(slot) == 0) {
                    long next = now.generation() + ahead;
                    tx.fetchValue(DSL.field(
                            "setval(to_regclass({0}), {1}, true)",
                            Long.class, DSL.val(sequence(schema)), DSL.val(next)));
                    return new Advance(next, true, 0);
                }
            }
            int oldest = (int) ((now.generation() + 1) % SLOTS);
            return new Advance(now.generation(), false, makeRoom.makeRoom(tx, oldest, now.current()));
        }));
    }

    /**
     * Whether the connection's role may turn the generations: {@code TRUNCATE} on each partition,
     * {@code UPDATE} on the sequence.
     *
     * @return true when the table is partitioned and the role may do both
     */
    public boolean mayTurn() {
        String schema = schema();
        if (schema == null) {
            return false;
        }
        List<org.jooq.Condition> each = new ArrayList<>();
        each.add(DSL.condition("has_sequence_privilege(to_regclass({0}), 'UPDATE')", DSL.val(sequence(schema))));
        for (int slot = 0; slot < SLOTS; slot++) {
            each.add(DSL.condition(
                    "has_table_privilege(to_regclass({0}), 'TRUNCATE')", DSL.val(dsl.render(partition(schema, slot)))));
        }
        return Errors.translating(() -> dsl.fetchValue(DSL.field(DSL.and(each))));
    }

    /**
     * Moves the rows of {@code table} that {@code which} picks out of slot {@code from} into slot
     * {@code to}, every other column kept, in one statement: {@code WITH moved AS (DELETE ...
     * RETURNING ...) INSERT ... SELECT}. A statement that waits meanwhile for a moved row's lock
     * finds the row deleted (and looks again, if it is written to: see the tables' own look-again),
     * rather than failing as it would on a row an UPDATE moved between partitions.
     *
     * @param tx the transaction
     * @param table the partitioned table
     * @param slot its slot column
     * @param from the slot the rows are in
     * @param which the rows to move, besides {@code slot = from} (an {@code IN} of keys locked
     *     {@code SKIP LOCKED}, so that a row another statement is changing is left for later)
     * @param to the slot they go to
     * @return how many moved
     */
    public static <R extends org.jooq.Record> int move(
            DSLContext tx, Table<R> table, Field<Short> slot, int from, Condition which, int to) {
        List<Field<?>> columns = new ArrayList<>(java.util.Arrays.asList(table.fields()));
        columns.remove(slot);
        var moved = DSL.name("moved")
                .as(DSL.deleteFrom(table)
                        .where(slot.eq((short) from))
                        .and(which)
                        .returningResult(columns));
        List<Field<?>> selected = new ArrayList<>();
        for (Field<?> column : columns) {
            selected.add(DSL.field(DSL.name("moved", column.getName()), column.getDataType()));
        }
        selected.add(DSL.val((short) to, slot));
        List<Field<?>> inserted = new ArrayList<>(columns);
        inserted.add(slot);
        return tx.with(moved)
                .insertInto(table)
                .columns(inserted)
                .select(DSL.select(selected).from(moved))
                .execute();
    }

    /**
     * {@return the partition of {@code slot}}
     *
     * @param schema {@link #schema()}
     * @param slot 0 to {@link #SLOTS} - 1
     */
    public Name partition(String schema, int slot) {
        return DSL.name(schema, tableName + "_slot" + slot);
    }

    private String sequence(String schema) {
        return dsl.render(DSL.name(schema, sequenceName));
    }
}

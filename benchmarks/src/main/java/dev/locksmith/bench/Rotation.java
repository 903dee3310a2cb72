package dev.locksmith.bench;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * The generations of a load on rotating tables ({@link HorizonRotating}, {@link HorizonPoolRotating}):
 * writers insert into the current generation's table; every generation (a fixed time) the next
 * table becomes current once it is empty; a table that is no longer current and holds no row is
 * emptied by {@code TRUNCATE}, which no snapshot can hold back, so dead tuples stay bounded by
 * the rows of about one generation whatever holds the horizon.
 *
 * <p>The truncation takes the table's ACCESS EXCLUSIVE lock with a short {@code lock_timeout},
 * checks under it that the table is empty (a writer that read the old generation may have
 * committed into it since), and only then truncates: a row is never emptied away. A writer that
 * inserts after the truncation (it read the generation before the rotation) leaves a row the
 * readers still find, since they read every table.
 */
final class Rotation {

    /** Tables in the rotation: the current one, the one draining, and room to skip a busy one. */
    static final int TABLES = 4;

    /** How often the rotator looks at the tables. */
    private static final long TICK_NANOS = 50_000_000;

    private final DataSource ds;
    /** The tables, quoted for the statements, {@link #TABLES} of them. */
    private final List<String> quoted;

    private final long generationNanos;
    /** The current generation; its table is {@code generation % TABLES}. */
    private final AtomicLong generation = new AtomicLong();
    /** Per table: the generation it last held, or -1 once it is truncated (empty, ready to be current). */
    private final AtomicLongArray heldGeneration = new AtomicLongArray(TABLES);
    /** Tables truncated. */
    private final AtomicLong truncations = new AtomicLong();
    /** Truncations given up for the lock or for rows still in the table. */
    private final AtomicLong truncationsDeferred = new AtomicLong();

    Rotation(DataSource ds, List<String> quoted, long generationMillis) {
        if (quoted.size() != TABLES) {
            throw new IllegalArgumentException("a rotation has " + TABLES + " tables, not " + quoted.size());
        }
        this.ds = ds;
        this.quoted = List.copyOf(quoted);
        this.generationNanos = generationMillis * 1_000_000;
        for (int i = 0; i < TABLES; i++) {
            heldGeneration.set(i, i == 0 ? 0 : -1);
        }
    }

    long generationMillis() {
        return generationNanos / 1_000_000;
    }

    /** {@return the current generation} */
    long generation() {
        return generation.get();
    }

    /** {@return the table of generation {@code g}} */
    static int table(long g) {
        return (int) (g % TABLES);
    }

    /** {@return whether generation {@code g}'s table still holds it (not truncated since)} */
    boolean holds(long g) {
        return heldGeneration.get(table(g)) == g;
    }

    /**
     * Every tick until {@code stop}: truncates the drained tables, and moves to the next
     * generation once one is due; counts a failed look into {@code failures}.
     */
    void run(AtomicBoolean stop, AtomicLong failures) {
        long started = System.nanoTime();
        while (!stop.get()) {
            LockSupport.parkNanos(TICK_NANOS);
            try {
                long current = generation.get();
                for (int i = 0; i < TABLES; i++) {
                    long held = heldGeneration.get(i);
                    if (held >= 0 && held != current) {
                        if (truncateIfEmpty(i)) {
                            heldGeneration.set(i, -1);
                            truncations.incrementAndGet();
                        } else {
                            truncationsDeferred.incrementAndGet();
                        }
                    }
                }
                int next = table(current + 1);
                if (System.nanoTime() - started >= generationNanos && heldGeneration.get(next) < 0) {
                    heldGeneration.set(next, current + 1);
                    generation.set(current + 1);
                    started = System.nanoTime();
                }
            } catch (SQLException e) {
                failures.incrementAndGet();
            }
        }
    }

    /** Truncates table {@code i} if, under its ACCESS EXCLUSIVE lock, it holds no row. */
    private boolean truncateIfEmpty(int i) throws SQLException {
        return Jdbc.inTransaction(ds, c -> {
            try (Statement s = c.createStatement()) {
                s.execute("SELECT set_config('lock_timeout', '20ms', true)");
                try {
                    s.execute("LOCK TABLE " + quoted.get(i) + " IN ACCESS EXCLUSIVE MODE");
                } catch (SQLException busy) {
                    if ("55P03".equals(busy.getSQLState())) {
                        c.rollback();
                        return false;
                    }
                    throw busy;
                }
                try (ResultSet r = s.executeQuery("SELECT EXISTS (SELECT 1 FROM " + quoted.get(i) + ")")) {
                    r.next();
                    if (r.getBoolean(1)) {
                        return false;
                    }
                }
                s.execute("TRUNCATE " + quoted.get(i));
                return true;
            }
        });
    }

    /** {@return generations, truncations and deferred truncations, for the log} */
    String summary() {
        return String.format(
                "%d generations, %d truncations, %d deferred (rows left or lock busy)",
                generation.get() + 1, truncations.get(), truncationsDeferred.get());
    }
}

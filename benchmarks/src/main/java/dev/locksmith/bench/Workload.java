package dev.locksmith.bench;

import dev.locksmith.ExecutionMode;
import dev.locksmith.Locksmith;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jooq.DSLContext;
import org.jooq.ExecuteListener;
import org.jooq.impl.DSL;

/**
 * A benchmark workload: a list of cases, each run as a library variant and a raw-JDBC variant, and
 * where the library's execution mode matters ({@link #inEveryMode}), the library also with an
 * {@code ExecuteListener} (so that its hot statements go through jOOQ) and in
 * {@link ExecutionMode#RAW_JDBC}.
 */
public interface Workload {

    /** Short name, e.g. {@code queue-tx}. */
    String name();

    /** The cases to run under {@code options}. */
    List<Case> cases(BenchOptions options);

    /**
     * One configuration.
     *
     * @param config its settings as text
     * @param workers worker threads
     * @param unit what the throughput counts
     * @param library the library variant, on the session's {@code DSLContext} (default execution
     *     mode, no listener)
     * @param libraryListened the library in the default mode with a no-op {@code ExecuteListener},
     *     so that its hot statements go through jOOQ's execution; or null (see below)
     * @param libraryJdbc the library in {@link ExecutionMode#RAW_JDBC}; or null where the mode
     *     makes no difference (no pre-rendered statement, or a worker that builds its own
     *     {@code DSLContext})
     * @param raw the plain-JDBC variant running the same SQL, or null where there is none
     * @param pgbench {@code pgbench} running the library's SQL on as many clients, or null
     * @param plain {@code pgbench} running the plainest SQL that does the same job (the claim
     *     of the baseline: no priorities, no ordering keys), or null
     */
    record Case(
            String config,
            int workers,
            String unit,
            Variant library,
            Variant libraryListened,
            Variant libraryJdbc,
            Variant raw,
            Variant pgbench,
            Variant plain) {

        /** A case whose library runs in one way only. */
        Case(String config, int workers, String unit, Variant library, Variant raw) {
            this(config, workers, unit, library, null, null, raw, null, null);
        }

        /** A case without pgbench variants. */
        Case(
                String config,
                int workers,
                String unit,
                Variant library,
                Variant libraryListened,
                Variant libraryJdbc,
                Variant raw) {
            this(config, workers, unit, library, libraryListened, libraryJdbc, raw, null, null);
        }

        /** This case with pgbench running the library's SQL and, if not null, the plain SQL. */
        Case withPgbench(Variant pgbench, Variant plain) {
            return new Case(config, workers, unit, library, libraryListened, libraryJdbc, raw, pgbench, plain);
        }
    }

    /** A listener that does nothing: its presence alone sends the hot statements through jOOQ. */
    ExecuteListener NO_OP_LISTENER = new ExecuteListener() {
        private static final long serialVersionUID = 1L;
    };

    /**
     * A case whose library variant ({@code library} on a {@code DSLContext}) runs three ways: on
     * {@code dsl} as given, with {@link #NO_OP_LISTENER} added, and in raw JDBC mode.
     */
    static Case inEveryMode(
            String config,
            int workers,
            String unit,
            DSLContext dsl,
            Function<DSLContext, Variant> library,
            Variant raw) {
        DSLContext listened = DSL.using(dsl.configuration().deriveAppending(NO_OP_LISTENER));
        return new Case(
                config,
                workers,
                unit,
                library.apply(dsl),
                library.apply(listened),
                library.apply(Locksmith.builder(dsl)
                        .executionMode(ExecutionMode.RAW_JDBC)
                        .build()
                        .dsl()),
                raw);
    }

    /** One way of doing the work. */
    interface Variant {
        /** Resets the database state for a run. */
        void prepare() throws Exception;

        /** The operation worker {@code worker} repeats. */
        Op op(int worker);

        /** Correctness violations found after a run (lost, duplicated, money not conserved). */
        long verify() throws Exception;

        /** Further figures of the last run, e.g. retries per operation. */
        default Map<String, Double> extras() {
            return Map.of();
        }

        /** Whether the operation's latency is recorded (p50/p99). */
        default boolean timed() {
            return false;
        }

        /**
         * Whether a run ends when every worker has found no more work (a fixed amount of work,
         * like a queue drain) rather than after the duration.
         */
        default boolean untilExhausted() {
            return false;
        }

        /**
         * Whether a worker stops when an operation finds no work (a prefilled queue ran dry); the
         * run then ends early and its rate is taken over the time until the last worker stopped.
         */
        default boolean stopsWhenEmpty() {
            return untilExhausted();
        }

        /**
         * Whether the work runs in this JVM, on the session's pool; false for a variant run by
         * another process (pgbench), which opens connections of its own.
         */
        default boolean inThisJvm() {
            return true;
        }
    }

    /** One operation; returns the units of work it did, 0 when there was none. */
    @FunctionalInterface
    interface Op {
        int run() throws Exception;
    }

    /** A variant that measures itself (a worker runtime with its own threads). */
    interface SelfTimed extends Variant {
        /** Does the whole run and returns units per second. */
        double measure() throws Exception;

        /**
         * Units one {@link #measure()} does, for the JVM's CPU time per unit (client CPU); zero
         * when not known, or when the work is done outside this JVM.
         */
        default long units() {
            return 0;
        }

        /**
         * Whether the runner warms this JVM's JIT compiler up with discarded runs of this
         * variant before a case's first run: for a fixed amount of work done in this JVM (a
         * drain), whose single run is too short for the compiler to finish; not for work done by
         * another process (pgbench), nor for a run long enough to include its own warm-up
         * (sustained).
         */
        default boolean warmsUpByRepeating() {
            return false;
        }

        @Override
        default Op op(int worker) {
            throw new UnsupportedOperationException("self-timed");
        }
    }
}

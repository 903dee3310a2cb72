package dev.locksmith.bench;

import java.util.List;
import java.util.Map;

/** A benchmark workload: a list of cases, each run as a library variant and a raw-JDBC variant. */
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
     * @param library the library variant
     * @param raw the plain-JDBC variant running the same SQL, or null where there is none
     */
    record Case(String config, int workers, String unit, Variant library, Variant raw) {
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

        @Override
        default Op op(int worker) {
            throw new UnsupportedOperationException("self-timed");
        }
    }
}

package dev.locksmith.micrometer;

import dev.locksmith.observe.Outcome;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;

/**
 * The meters of one name and fixed tags, one per {@code outcome} tag, each registered on first
 * use. A slot is an {@link Outcome} ({@link #slot(Outcome)}), {@link #ERROR}, {@link #TIMEOUT} or
 * {@link #DEADLOCK}. Reading a registered meter allocates nothing.
 *
 * @param <M> the meter type
 */
final class ByOutcome<M> {

    /** {@link Outcome#TIMED_OUT}'s slot. */
    static final int TIMED_OUT = 7;

    /** {@link Outcome#SNOOZED}'s slot. */
    static final int SNOOZED = 8;

    /** {@link Outcome#CANCELLED}'s slot. */
    static final int CANCELLED = 9;

    /** The operation threw something else than the failures below. */
    static final int ERROR = 10;

    /** A lock was not available: a bounded wait ran out, or {@code NOWAIT} found it held. */
    static final int TIMEOUT = ERROR + 1;

    /** The statement was chosen as a deadlock victim. */
    static final int DEADLOCK = ERROR + 2;

    private static final String[] TAGS = tags();

    private final AtomicReferenceArray<M> meters = new AtomicReferenceArray<>(TAGS.length);
    private final Function<String, M> register;

    /** @param register registers (or finds: registries return the same meter for the same id) the meter of one outcome tag */
    ByOutcome(Function<String, M> register) {
        this.register = register;
    }

    /** The meter of {@code slot}; two threads racing to register it get the same meter from the registry. */
    M get(int slot) {
        M meter = meters.get(slot);
        if (meter == null) {
            meter = register.apply(TAGS[slot]);
            meters.set(slot, meter);
        }
        return meter;
    }

    /** The slot of an outcome. */
    static int slot(Outcome outcome) {
        return switch (outcome) {
            case OK -> 0;
            case EMPTY -> 1;
            case LEASE_LOST -> 2;
            case RETRY_SCHEDULED -> 3;
            case FAILED -> 4;
            case INSUFFICIENT_FUNDS -> 5;
            case ALREADY_TRANSFERRED -> 6;
            case TIMED_OUT -> TIMED_OUT;
            case SNOOZED -> SNOOZED;
            case CANCELLED -> CANCELLED;
        };
    }

    private static String[] tags() {
        String[] tags = new String[DEADLOCK + 1];
        for (Outcome outcome : Outcome.values()) {
            tags[slot(outcome)] = outcome.tag();
        }
        tags[ERROR] = "error";
        tags[TIMEOUT] = "timeout";
        tags[DEADLOCK] = "deadlock";
        return tags;
    }
}

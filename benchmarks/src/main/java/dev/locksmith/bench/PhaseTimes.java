package dev.locksmith.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * What one load of {@link HorizonBench} measured, phase by phase: durations of its timed
 * statement (a claim, an acquisition) and its completed units per second. The bench moves every
 * load to the next phase at once ({@link #phase(int)}).
 */
final class PhaseTimes {

    private final List<List<Long>> nanos = new ArrayList<>();
    private final List<List<Long>> perSecond = new ArrayList<>();
    private volatile int phase;

    PhaseTimes(int phases) {
        for (int i = 0; i < phases; i++) {
            nanos.add(new ArrayList<>());
            perSecond.add(new ArrayList<>());
        }
    }

    /** From now on, what is recorded belongs to phase {@code index}. */
    void phase(int index) {
        phase = index;
    }

    /** One timed statement. */
    void time(long elapsedNanos) {
        List<Long> list = nanos.get(phase);
        synchronized (list) {
            list.add(elapsedNanos);
        }
    }

    /** Units completed in the last second of the current phase. */
    void second(long units) {
        List<Long> list = perSecond.get(phase);
        synchronized (list) {
            list.add(units);
        }
    }

    /** {@return the median of the phase's timed statements, in ms (NaN when none)} */
    double medianMillis(int index) {
        List<Long> list = nanos.get(index);
        synchronized (list) {
            return list.isEmpty()
                    ? Double.NaN
                    : Stats.median(list.stream().map(n -> n / 1e6).toList());
        }
    }

    /** {@return the 90th percentile of the phase's timed statements, in ms (NaN when none)} */
    double p90Millis(int index) {
        List<Long> list = nanos.get(index);
        long[] sorted;
        synchronized (list) {
            sorted = list.stream().mapToLong(Long::longValue).sorted().toArray();
        }
        return sorted.length == 0 ? Double.NaN : Stats.percentile(sorted, 90) / 1e6;
    }

    /** {@return how many statements the phase timed} */
    int timed(int index) {
        List<Long> list = nanos.get(index);
        synchronized (list) {
            return list.size();
        }
    }

    /** {@return units per second over the phase's whole seconds: mean and minimum} */
    double[] rate(int index) {
        List<Long> list = perSecond.get(index);
        synchronized (list) {
            if (list.isEmpty()) {
                return new double[] {Double.NaN, Double.NaN};
            }
            return new double[] {
                list.stream().mapToLong(Long::longValue).average().orElse(Double.NaN),
                list.stream().mapToLong(Long::longValue).min().orElse(0)
            };
        }
    }
}

package dev.locksmith.bench;

import java.util.Arrays;

/** Latency samples of one worker thread; merged after a run. Not thread-safe by design. */
public final class Latencies {

    private long[] samples = new long[1024];
    private int size;

    /** Records one latency. */
    public void record(long nanos) {
        if (size == samples.length) {
            samples = Arrays.copyOf(samples, size * 2);
        }
        samples[size++] = nanos;
    }

    /** How many samples. */
    public int size() {
        return size;
    }

    /** All samples of {@code parts}, sorted. */
    public static long[] mergeSorted(Iterable<Latencies> parts) {
        int total = 0;
        for (Latencies part : parts) {
            total += part.size;
        }
        long[] all = new long[total];
        int at = 0;
        for (Latencies part : parts) {
            System.arraycopy(part.samples, 0, all, at, part.size);
            at += part.size;
        }
        Arrays.sort(all);
        return all;
    }
}

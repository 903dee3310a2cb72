package com.example.orders;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/** Waits for a state of the database that another thread's commit brings about, up to a deadline. */
final class Eventually {

    static final Duration DEADLINE = Duration.ofSeconds(30);

    private Eventually() {}

    /**
     * Reads {@code read} until {@code done} holds or {@link #DEADLINE} has passed; each read is a
     * query, so between reads the thread only yields.
     *
     * @return the last value read, for the test's exact assertion (which fails, with that value,
     *     when the deadline passed first)
     */
    static <T> T read(Supplier<T> read, Predicate<T> done) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        T value = read.get();
        while (!done.test(value) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            value = read.get();
        }
        return value;
    }
}

package dev.locksmith.it.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition on database state that no latch can signal (rows drained, statistics
 * updated, a log line written), polling every 100 ms, and fails naming it after the deadline.
 */
public final class Await {

    private Await() {}

    /** Returns once {@code condition} holds; fails the test after {@code timeout}. */
    public static void until(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waiting for " + what).isNegative();
            Thread.sleep(100);
        }
    }
}

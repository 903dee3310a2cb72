package dev.locksmith;

import dev.locksmith.exception.LocksmithException;
import java.time.Duration;

/**
 * Observes retries of a {@link RetryPolicy}, for metrics and logs. Set with
 * {@link RetryPolicy.Builder#listener(RetryListener)}. Called on the retrying thread, before it
 * pauses; it must be quick and must not throw.
 */
@FunctionalInterface
public interface RetryListener {
    /** Ignores every retry. */
    RetryListener NONE = (failedAttempts, failure, pause) -> {};

    /**
     * Called before the pause that precedes attempt {@code failedAttempts + 1}.
     *
     * @param failedAttempts attempts that failed so far (1-based)
     * @param failure the translated failure of the last attempt (for an optimistic transfer that
     *     lost a compare-and-swap race, an {@code OptimisticConflictException})
     * @param pause how long the loop will sleep now
     */
    void onRetry(int failedAttempts, LocksmithException failure, Duration pause);
}

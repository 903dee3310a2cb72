package dev.locksmith.internal;

import java.time.Duration;

/** Pauses between attempts; replaced in tests so that they never sleep. <b>Internal: not API.</b> */
@FunctionalInterface
public interface Sleeper {
    /** The real thing: {@link Thread#sleep(long, int)}. */
    Sleeper THREAD_SLEEP = pause -> Thread.sleep(pause.toMillis(), pause.toNanosPart() % 1_000_000);

    /**
     * Sleeps for {@code pause}.
     *
     * @param pause how long
     * @throws InterruptedException when the thread is interrupted meanwhile
     */
    void sleep(Duration pause) throws InterruptedException;
}

package dev.locksmith.bench;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One load of {@link HorizonBench}, running for all three phases: a queue with its producer and
 * consumer, or the pool. Counts what it produced and completed, and times its timed statement
 * into {@link #times()}.
 */
abstract class HorizonLoad implements AutoCloseable {

    final AtomicLong produced = new AtomicLong();
    final AtomicLong done = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    final AtomicBoolean stop = new AtomicBoolean();
    private final PhaseTimes times;

    HorizonLoad(int phases) {
        this.times = new PhaseTimes(phases);
    }

    /** {@return the label in the report} */
    abstract String label();

    /** {@return what the timed statement is, for the report} */
    abstract String timed();

    /** {@return the tables whose size and dead tuples the report shows, schema-qualified} */
    abstract List<String> tables();

    /** {@return whether {@link #produced} means anything (a queue: backlog = produced - done)} */
    abstract boolean hasBacklog();

    /** Starts its threads. */
    abstract void start() throws Exception;

    PhaseTimes times() {
        return times;
    }

    /**
     * Runs {@code tick} {@code perSecond} times a second on its own thread until closed, on a
     * fixed schedule: a tick that runs late is followed by the ones it held up at once, so the
     * offered rate stays the one asked for while the load keeps up.
     */
    Thread paced(String name, int perSecond, Tick tick) {
        long interval = 1_000_000_000L / perSecond;
        Thread t = new Thread(
                () -> {
                    long next = System.nanoTime();
                    while (!stop.get()) {
                        long wait = next - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait);
                            continue;
                        }
                        try {
                            tick.run();
                        } catch (Exception e) {
                            failures.incrementAndGet();
                        }
                        next += interval;
                    }
                },
                name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * Runs {@code claim} until closed, timing each call into {@link #times()} and counting what it
     * found as done; after a call that found nothing, waits 5 ms.
     */
    void consumeUntilStopped(Claim claim) throws Exception {
        while (!stop.get()) {
            long begin = System.nanoTime();
            int n = claim.run();
            times().time(System.nanoTime() - begin);
            done.addAndGet(n);
            if (n == 0) {
                LockSupport.parkNanos(5_000_000);
            }
        }
    }

    /** One claim of a consumer: the jobs it found. */
    @FunctionalInterface
    interface Claim {
        int run() throws Exception;
    }

    /** One unit of a paced or looping thread's work. */
    @FunctionalInterface
    interface Tick {
        void run() throws Exception;
    }

    /** Stops the threads it started and waits for them. */
    void join(List<Thread> threads) throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join(30_000);
        }
    }
}

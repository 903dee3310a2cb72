package dev.locksmith.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * One run of one cell of {@code bench latency}: {@code producers} threads each commit one job per
 * transaction on a fixed schedule, together {@code rate} jobs a second, for {@code duration}; the
 * worker's handler notes when it starts each job. A job's latency is its handler's start less the
 * moment its producer's commit returned, on this JVM's clock ({@link System#nanoTime()}); a
 * handler may start before its producer has seen the commit return, which counts as zero.
 */
final class LatencyRun {

    /** Commits one job and returns its id; called by the producer threads. */
    @FunctionalInterface
    interface Producer {
        long commitOne(int producer, long sequence);
    }

    /** What one run measured. */
    record Measured(long[] sortedNanos, int missing, double achievedRate, int failures) {

        double percentileMillis(double p) {
            return sortedNanos.length == 0 ? Double.NaN : Stats.percentile(sortedNanos, p) / 1e6;
        }

        double maxMillis() {
            return sortedNanos.length == 0 ? Double.NaN : sortedNanos[sortedNanos.length - 1] / 1e6;
        }
    }

    /** How long the run waits, after the producers stop, for handlers of jobs not yet started. */
    static final Duration DRAIN = Duration.ofSeconds(30);

    private final Map<Long, Long> committed = new ConcurrentHashMap<>();
    private final Map<Long, Long> started = new ConcurrentHashMap<>();

    /** Call from the handler, first thing, for each job it starts. */
    void started(long jobId) {
        started(jobId, System.nanoTime());
    }

    /** Job {@code jobId}'s handler started at {@code nanos} ({@link System#nanoTime()}'s clock). */
    void started(long jobId, long nanos) {
        started.putIfAbsent(jobId, nanos);
    }

    /**
     * Reads a worker process's standard output on a daemon thread: "ready" counts {@code ready}
     * down, each "&lt;job id&gt; &lt;nanos&gt;" is a handler's start ({@link #started(long, long)}),
     * any other line is skipped; the end of the output, or output that cannot be read, counts
     * {@code ready} down too (the caller then finds the process not alive, or its jobs missing).
     *
     * @param process the worker's process
     * @param ready counted down once the worker runs
     * @param name the reading thread's name
     */
    void readStarts(Process process, CountDownLatch ready, String name) {
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader out = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line; (line = out.readLine()) != null; ) {
                            if (line.equals("ready")) {
                                ready.countDown();
                            } else {
                                startLine(line);
                            }
                        }
                    } catch (IOException e) {
                        // the process went away: what it wrote before counts
                    } finally {
                        ready.countDown();
                    }
                },
                name);
        reader.setDaemon(true);
        reader.start();
    }

    /** A "&lt;job id&gt; &lt;nanos&gt;" line as a handler's start; another line is skipped. */
    private void startLine(String line) {
        int space = line.indexOf(' ');
        if (space <= 0) {
            return;
        }
        try {
            started(Long.parseLong(line.substring(0, space)), Long.parseLong(line.substring(space + 1)));
        } catch (NumberFormatException notAStart) {
            // a line the worker's JVM or runtime wrote for some other reason
        }
    }

    /**
     * {@link #run}, after a warm-up run at the same rate whose latencies are dropped, and a second
     * for the worker to go idle again: the worker's code is then compiled, as in a service that
     * has been running, rather than interpreted for the first thousand jobs (a worker in a JVM of
     * its own, or graphile-worker's Node.js, starts with each run).
     *
     * @param producer commits one job (the id of which the handler will report)
     * @param producers producer threads
     * @param rate jobs per second, all producers together
     * @param warmUp how long the discarded run lasts; zero for none
     * @param duration how long the measured run lasts
     */
    Measured runWarm(Producer producer, int producers, int rate, Duration warmUp, Duration duration)
            throws InterruptedException {
        if (!warmUp.isZero()) {
            run(producer, producers, rate, warmUp);
            committed.clear();
            started.clear();
            Thread.sleep(1000);
        }
        return run(producer, producers, rate, duration);
    }

    /**
     * Runs the producers and collects the latencies.
     *
     * @param producer commits one job (the id of which the handler will report)
     * @param producers producer threads
     * @param rate jobs per second, all producers together
     * @param duration how long the producers run
     */
    Measured run(Producer producer, int producers, int rate, Duration duration) throws InterruptedException {
        long period = TimeUnit.SECONDS.toNanos(1) * producers / rate;
        long begin = System.nanoTime();
        long end = begin + duration.toNanos();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        int[] failures = new int[producers];
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int index = p;
            // spread the producers' schedules over one period
            long first = begin + period * p / producers;
            Thread t = new Thread(
                    () -> {
                        for (long i = 0; ; i++) {
                            long due = first + i * period;
                            if (due >= end) {
                                return;
                            }
                            long wait = due - System.nanoTime();
                            if (wait > 0) {
                                LockSupport.parkNanos(wait);
                            }
                            try {
                                long id = producer.commitOne(index, i);
                                committed.put(id, System.nanoTime());
                            } catch (RuntimeException e) {
                                failures[index]++;
                                failure.compareAndSet(null, e);
                            }
                        }
                    },
                    "latency-producer-" + p);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        double seconds = (System.nanoTime() - begin) / 1e9;
        long drainUntil = System.nanoTime() + DRAIN.toNanos();
        while (!started.keySet().containsAll(committed.keySet()) && System.nanoTime() < drainUntil) {
            Thread.sleep(20);
        }
        int failed = 0;
        for (int f : failures) {
            failed += f;
        }
        if (failed > 0 && committed.isEmpty()) {
            throw failure.get();
        }
        long[] latencies = new long[committed.size()];
        int n = 0;
        int missing = 0;
        for (Map.Entry<Long, Long> e : committed.entrySet()) {
            Long start = started.get(e.getKey());
            if (start == null) {
                missing++;
            } else {
                latencies[n++] = Math.max(0, start - e.getValue());
            }
        }
        long[] sorted = java.util.Arrays.copyOf(latencies, n);
        java.util.Arrays.sort(sorted);
        return new Measured(sorted, missing, committed.size() / seconds, failed);
    }
}

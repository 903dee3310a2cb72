package dev.locksmith.it.support;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs bodies on real threads released together by a start gate, with a hard time limit. */
public final class Concurrently {

    /** A body that gets its thread index. */
    @FunctionalInterface
    public interface Body<T> {
        T run(int thread) throws Exception;
    }

    private Concurrently() {}

    /**
     * The failure to report when threads fail: the first that is not merely a consequence of
     * another thread failing (a broken barrier), with every other failure attached as suppressed,
     * so that the thread which really failed is never hidden behind its neighbours.
     */
    static Exception rootFailure(List<Exception> failures) {
        Exception root = failures.stream()
                .filter(f -> !causedByBrokenBarrier(f))
                .findFirst()
                .orElse(failures.get(0));
        for (Exception other : failures) {
            if (other != root) {
                root.addSuppressed(other);
            }
        }
        return root;
    }

    private static boolean causedByBrokenBarrier(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof java.util.concurrent.BrokenBarrierException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs {@code body} on {@code threads} threads at once and returns each thread's result in
     * thread order. Fails if any thread fails or the whole run exceeds {@code timeoutSeconds}.
     */
    public static <T> List<T> run(int threads, long timeoutSeconds, Body<T> body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int index = i;
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    return body.run(index);
                }));
            }
            ready.await(timeoutSeconds, TimeUnit.SECONDS);
            go.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            List<T> results = new ArrayList<>();
            List<Exception> failures = new ArrayList<>();
            for (Future<T> f : futures) {
                try {
                    results.add(f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                } catch (ExecutionException e) {
                    failures.add(e.getCause() instanceof Exception ex ? ex : e);
                } catch (TimeoutException e) {
                    throw new AssertionError("concurrent run did not finish within " + timeoutSeconds + " s", e);
                }
            }
            if (!failures.isEmpty()) {
                throw rootFailure(failures);
            }
            return results;
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}

package dev.locksmith.it.support;

import dev.locksmith.jobs.NewJob;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Handler runs of keyed jobs, each stamped from one global counter when its handler starts and
 * when it ends, so that "job B started after job A ended" is a comparison of two numbers taken
 * on real threads, not of clocks. A key's jobs ran one at a time in enqueue order exactly when,
 * for every two jobs of the key consecutive in enqueue (id) order, the later one started after
 * the earlier one ended.
 */
public final class KeyedRuns {

    /** One handler run: the job, its key, and the counter at its start and end. */
    public record Run(long jobId, String key, long start, long end) {}

    private final AtomicLong counter = new AtomicLong();
    private final ConcurrentLinkedQueue<Run> runs = new ConcurrentLinkedQueue<>();

    /** Call first thing in the handler; pass the result to {@link #ended}. */
    public long started() {
        return counter.incrementAndGet();
    }

    /** Call last thing in the handler. */
    public void ended(long jobId, String key, long start) {
        runs.add(new Run(jobId, key, start, counter.incrementAndGet()));
    }

    public List<Run> runs() {
        return List.copyOf(runs);
    }

    /**
     * {@code keys} keys with {@code perKey} jobs each, in one random interleaving (a fixed seed),
     * each key's jobs in order: payload {@code {"key": k, "n": i}}. Neighbours in claim order often
     * share a key, so a claim that ignored keys would hand one key's jobs to several workers at
     * once.
     */
    public static List<NewJob> interleaved(String queue, int keys, int perKey, long seed) {
        List<Integer> slots = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            slots.addAll(Collections.nCopies(perKey, k));
        }
        Collections.shuffle(slots, new Random(seed));
        int[] next = new int[keys];
        List<NewJob> jobs = new ArrayList<>();
        for (int k : slots) {
            jobs.add(NewJob.builder(queue, "step")
                    .orderingKey("customer-" + k)
                    .payload("{\"key\": " + k + ", \"n\": " + next[k]++ + "}")
                    .build());
        }
        return jobs;
    }

    /**
     * Every pair of jobs of one key, consecutive in enqueue order, whose later job started before
     * the earlier one ended (overlap) or before it started (out of order), described; and every
     * job that ran other than exactly once.
     *
     * @param enqueued job ids in enqueue order, with their keys
     */
    public List<String> violations(Map<Long, String> enqueued) {
        Map<Long, List<Run>> byJob = new HashMap<>();
        for (Run run : runs) {
            byJob.computeIfAbsent(run.jobId(), id -> new ArrayList<>()).add(run);
        }
        List<String> violations = new ArrayList<>();
        Map<String, List<Long>> byKey = new LinkedHashMap<>();
        enqueued.forEach(
                (id, key) -> byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(id));
        enqueued.keySet().forEach(id -> {
            int times = byJob.getOrDefault(id, List.of()).size();
            if (times != 1) {
                violations.add("job " + id + " ran " + times + " times");
            }
        });
        byKey.forEach((key, ids) -> {
            List<Long> sorted = ids.stream().sorted().toList();
            for (int i = 1; i < sorted.size(); i++) {
                Run before = first(byJob, sorted.get(i - 1));
                Run after = first(byJob, sorted.get(i));
                if (before != null && after != null && after.start() < before.end()) {
                    violations.add(String.format(
                            "%s: job %d ran [%d, %d], its successor %d started at %d (%s)",
                            key,
                            before.jobId(),
                            before.start(),
                            before.end(),
                            after.jobId(),
                            after.start(),
                            after.start() < before.start() ? "out of order" : "overlap"));
                }
            }
        });
        return violations;
    }

    private static Run first(Map<Long, List<Run>> byJob, long id) {
        List<Run> runs = byJob.get(id);
        return runs == null || runs.isEmpty() ? null : runs.get(0);
    }
}

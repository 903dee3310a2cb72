package dev.locksmith.jobs;

import java.util.Objects;
import java.util.Set;

/**
 * What to claim: up to {@code limit} due jobs of {@code queue}, optionally only from some
 * shards, in order of priority, then {@code run_at}, then id.
 *
 * @param queue the queue
 * @param limit at most this many jobs, 1 to 10,000
 * @param shards only these shards; empty for all
 */
public record Claim(String queue, int limit, Set<Integer> shards) {

    /** Largest batch one claim may take. */
    public static final int MAX_LIMIT = 10_000;

    public Claim {
        NewJob.requireName("queue", queue, 128);
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("claim limit must be between 1 and " + MAX_LIMIT + ", was " + limit);
        }
        shards = Set.copyOf(Objects.requireNonNull(shards, "shards"));
        for (int shard : shards) {
            if (shard < 0) {
                throw new IllegalArgumentException("shards must not be negative, was " + shard);
            }
        }
    }

    /** Up to {@code limit} jobs of {@code queue} from any shard. */
    public static Claim of(String queue, int limit) {
        return new Claim(queue, limit, Set.of());
    }

    /** The same claim restricted to {@code shards}. */
    public Claim onShards(Set<Integer> shards) {
        return new Claim(queue, limit, shards);
    }
}

package dev.locksmith.jobs;

import java.util.Objects;
import java.util.Set;

/**
 * What to claim: up to {@code limit} due jobs of {@code queue}, optionally only from some
 * shards, in order of priority, then {@code run_at}, then id. A job with an ordering key is taken
 * only while it is the head of its key (no pending or running job of its key has a lower id,
 * whatever shard that one is on), so a claim holds at most one job per key ({@link JobQueue},
 * "Per-key ordering").
 *
 * @param queue the queue
 * @param limit at most this many jobs, 1 to 10,000
 * @param shards only these shards; empty for all
 */
public record Claim(String queue, int limit, Set<Integer> shards) {

    /** Largest batch one claim may take. */
    public static final int MAX_LIMIT = 10_000;

    /**
     * Validates the claim.
     *
     * @param queue the queue, 1 to 128 characters, not blank
     * @param limit 1 to {@value #MAX_LIMIT}
     * @param shards no negative numbers; copied
     * @throws IllegalArgumentException naming the invalid field
     */
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

    /**
     * Up to {@code limit} jobs of {@code queue} from any shard.
     *
     * @param queue the queue, 1 to 128 characters, not blank
     * @param limit 1 to {@value #MAX_LIMIT}
     * @return the claim
     * @throws IllegalArgumentException for an invalid queue or limit
     */
    public static Claim of(String queue, int limit) {
        return new Claim(queue, limit, Set.of());
    }

    /**
     * The same claim restricted to some shards, for deployments that give each worker its own
     * part of a hot queue.
     *
     * @param shards shard numbers, none negative; empty means every shard
     * @return a new claim; this one is unchanged
     */
    public Claim onShards(Set<Integer> shards) {
        return new Claim(queue, limit, shards);
    }
}

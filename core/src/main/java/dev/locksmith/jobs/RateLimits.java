package dev.locksmith.jobs;

import dev.locksmith.jobs.engine.Limits;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jooq.DSLContext;

/**
 * How many jobs of one concurrency key ({@link NewJob.Builder#concurrencyKey(String)}) may start
 * within a window of time, per queue: a default for every key of the queue, and a key's own rate,
 * which overrides it. Stored beside the {@linkplain ConcurrencyLimits concurrency limits}, in the
 * same rows ({@code job_concurrency_limits}): every JVM's claims obey the same rates, a change
 * applies to the claims that start after it commits, and a key may have both kinds (a job then
 * starts only when both allow it).
 *
 * <pre>{@code
 * RateLimits rates = queue.rateLimits();
 * rates.setDefault(dsl, "partner-calls", 100, Duration.ofMinutes(1)); // 100 calls a minute per partner
 * rates.set(dsl, "partner-calls", "slow-partner", 5, Duration.ofSeconds(1));
 * queue.enqueue(dsl, NewJob.builder("partner-calls", "sync").concurrencyKey("acme").build());
 * }</pre>
 *
 * <p><b>What is counted: a sliding window of starts.</b> A start is a claim of the job (leased or
 * transactional), at the time the claim recorded it; no window of length {@code per} ever holds
 * more than {@code maxStarts} starts of a key, across every JVM and both claim modes. A retried
 * job starts again. A job over its key's rate stays pending, its attempt not counted, and a claim
 * after the window has moved on takes it. Why a window of recorded starts and not a token bucket:
 * a bucket of {@code maxStarts} tokens refilled over {@code per} lets {@code 2 x maxStarts} jobs
 * start within one {@code per} (a full bucket, then its refill), where partners' limits are stated
 * per window; the window costs one stored time per start (at most {@code maxStarts} per key).
 *
 * <p><b>How.</b> Each rate-limited key has a row of recorded starts ({@code job_key_starts}). A
 * claim takes the key's rate lock (a transaction-scoped advisory lock; a key whose lock another
 * claim holds is left to that claim), reads the row with a snapshot taken after the lock, counts
 * the starts inside the window, takes at most the rest, and records one start per job it took, at
 * a time read after its locks, in the same statement as the claim. Claims of a key hold its lock in
 * turn and record times that only grow, so every window's last start was allowed by a count of all
 * the earlier starts in it. The times are the server's clock
 * ({@code clock_timestamp()}); a clock stepped backwards lets a window hold more.
 *
 * <p><b>Costs and limits.</b> A transactional claim ({@link TransactionalWorker},
 * {@link JobQueue#claimInTransaction}) holds the key's rate lock until its transaction ends (its
 * starts roll back with it): while it runs, other claims skip the key, so claim a rate-limited key's jobs
 * in batches there; and a handler that calls a partner and then rolls back made a call no window
 * holds: calls a partner counts belong in a {@link JobWorker}, built with {@code prefetch(0)} so
 * that a handler begins as its job is claimed. A role that claims keyed jobs of a queue with a rate
 * needs {@code SELECT}, {@code INSERT} and {@code UPDATE} on {@code job_key_starts}. A rate
 * applies from the next claim of the {@code JobQueue} that set it, and within about a second in
 * others (each looks once a second whether its queue has rates, and holds a rate-limited key back
 * until it has seen the rate). A window changed while a key is busy applies from the next claim (starts
 * older than the window in force are dropped). Claims need READ COMMITTED, as for concurrency
 * limits; a {@link TwoPhaseWorker}'s claim is a start too. On Citus a key's starts live on its
 * shard, written by the claim of that shard.
 */
public final class RateLimits {

    /** Largest number of starts per window. */
    public static final int MAX_STARTS = Limits.MAX_STARTS;

    private final Limits limits;

    RateLimits(Limits limits) {
        this.limits = limits;
    }

    /**
     * A rate: at most {@code maxStarts} starts in any window of length {@code per}.
     *
     * @param maxStarts 1 to {@link #MAX_STARTS}
     * @param per the window, 1 ms to 1 day, in whole microseconds
     */
    public record Rate(int maxStarts, Duration per) {

        /**
         * Checks the window is there.
         *
         * @param maxStarts the starts allowed per window
         * @param per the window
         */
        public Rate {
            Objects.requireNonNull(per, "per");
        }
    }

    /**
     * The rate limits of one queue.
     *
     * @param defaultPerKey the rate of every key without its own; empty when the queue has none
     * @param keys the keys' own rates, by key
     */
    public record QueueRates(Optional<Rate> defaultPerKey, Map<String, Rate> keys) {

        /**
         * Copies the keys.
         *
         * @param defaultPerKey the default per key, or empty
         * @param keys the keys' own rates
         */
        public QueueRates {
            Objects.requireNonNull(defaultPerKey, "defaultPerKey");
            keys = Map.copyOf(keys);
        }

        /**
         * The rate that applies to {@code concurrencyKey}: its own, else the default.
         *
         * @param concurrencyKey a key
         * @return the rate, or empty when the key starts without one
         */
        public Optional<Rate> rateOf(String concurrencyKey) {
            Rate own = keys.get(concurrencyKey);
            return own != null ? Optional.of(own) : defaultPerKey;
        }
    }

    /**
     * Sets the rate of every key of {@code queue} that has no rate of its own.
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue the queue, 1 to 128 characters
     * @param maxStarts 1 to {@link #MAX_STARTS}
     * @param per the window, 1 ms to 1 day, in whole microseconds
     * @throws IllegalArgumentException for a bad queue, count or window (nothing written)
     */
    public void setDefault(DSLContext tx, String queue, int maxStarts, Duration per) {
        limits.setRate(tx, queue, null, maxStarts, per);
    }

    /**
     * Sets the rate of one key of {@code queue}, which overrides the queue's default.
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue the queue, 1 to 128 characters
     * @param concurrencyKey the key, 1 to 256 characters
     * @param maxStarts 1 to {@link #MAX_STARTS}
     * @param per the window, 1 ms to 1 day, in whole microseconds
     * @throws IllegalArgumentException for a bad queue, key, count or window (nothing written)
     */
    public void set(DSLContext tx, String queue, String concurrencyKey, int maxStarts, Duration per) {
        limits.setRate(tx, queue, Objects.requireNonNull(concurrencyKey, "concurrencyKey"), maxStarts, per);
    }

    /**
     * Removes the default rate of {@code queue}'s keys (their concurrency limits stay).
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue the queue, 1 to 128 characters
     * @return whether it had one
     * @throws IllegalArgumentException for a bad queue (nothing removed)
     */
    public boolean removeDefault(DSLContext tx, String queue) {
        return limits.removeRate(tx, queue, null);
    }

    /**
     * Removes one key's own rate (the queue's default then applies to it, if any; its concurrency
     * limit stays).
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue the queue, 1 to 128 characters
     * @param concurrencyKey the key, 1 to 256 characters
     * @return whether it had one
     * @throws IllegalArgumentException for a bad queue or key (nothing removed)
     */
    public boolean remove(DSLContext tx, String queue, String concurrencyKey) {
        return limits.removeRate(tx, queue, Objects.requireNonNull(concurrencyKey, "concurrencyKey"));
    }

    /**
     * Reads the rates of {@code queue}.
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue the queue, 1 to 128 characters
     * @return its default and its keys' own rates
     */
    public QueueRates of(DSLContext tx, String queue) {
        var read = limits.readRates(tx, queue);
        return new QueueRates(read.getKey(), read.getValue());
    }
}

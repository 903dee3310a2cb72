package dev.locksmith.jobs;

import dev.locksmith.jobs.engine.Limits;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import org.jooq.DSLContext;

/**
 * How many jobs of one concurrency key may run at once ({@link NewJob.Builder#concurrencyKey(String)}),
 * per queue: a default for every key of the queue, and a key's own limit, which overrides it. The
 * limits are rows in the database ({@code job_concurrency_limits}), so every JVM's claims obey the
 * same ones, and a change applies to the claims that start after it commits. A key with neither
 * runs without a limit; a queue with no limit at all claims keyed jobs like any other.
 *
 * <pre>{@code
 * ConcurrencyLimits limits = queue.concurrencyLimits();
 * limits.setDefault(dsl, "reports", 4);          // at most 4 running reports per tenant
 * limits.set(dsl, "reports", "tenant-big", 16);   // except this one
 * queue.enqueue(dsl, NewJob.builder("reports", "monthly").concurrencyKey("tenant-7").build());
 * }</pre>
 *
 * <p><b>What is counted.</b> At no instant do more jobs of a key run than its limit, across every
 * JVM and both claim modes: a leased job ({@link JobWorker}, {@link JobQueue#claim}) from its claim
 * until it is completed, failed, released or, after its lease lapsed, rescued; a job of a
 * transactional claim ({@link TransactionalWorker}, {@link JobQueue#claimInTransaction}) while the
 * claiming transaction is open. The claim enforces it: a job of a key at its limit is not claimed
 * (it stays pending, its attempt not counted), and nothing is claimed and given back.
 *
 * <p><b>How.</b> A key of limit N has N slots. A claim locks free slots of the keys it visits
 * (transaction-scoped advisory locks, skipping those another claim holds), reads the running jobs
 * again with a snapshot taken after its locks, and gives each slot still free to one due job of
 * the key; a leased job keeps its slot in its row until it stops running, a transactional claim
 * holds the lock until it commits. The claim needs READ COMMITTED (the default): in a caller's
 * REPEATABLE READ or SERIALIZABLE transaction a claim that reaches keyed jobs of a queue with limits
 * fails (a claim that takes only jobs without a key does not). After a limit is set or lowered
 * while jobs of a key run, the key gets no more until its running jobs fit the limit (those claimed
 * before it had one included).
 * Claim keyed jobs once per transaction: a second claim in the same transaction holds the first
 * one's slot locks already, and cannot see the jobs it deleted.
 *
 * <p><b>Fairness.</b> A claim visits the keys that have pending jobs in key order, starting after
 * the key where the same thread's previous claim of the queue through the same {@link JobQueue}
 * object stopped (a thread's first, where that object's last claim stopped), and takes from each key at most
 * its free slots: the keys take turns (round robin), so one key with 100,000 pending jobs does
 * not hold back another key's 10. Within a key, jobs go in claim order (priority, then due time,
 * then id). Jobs without a key, on a queue with limits, are claimed beside them (each claim
 * tosses which kind goes first).
 *
 * <p>A key may also have a rate (starts per window of time): {@link RateLimits}, kept in the same
 * rows.
 *
 * <p><b>Works with</b> ordering keys (a job is claimed only as the head of its ordering key),
 * unique keys, priorities, delays, schedules (a template's key is kept), shards
 * ({@link Claim#onShards}), PgBouncer in transaction mode (the locks are transaction-scoped).
 * On Citus a job with a concurrency key goes to the shard its queue and key hash to (unless it is
 * given a shard: then the limits hold per shard), and the keyed claim of a shard counts the
 * key's running jobs there, in statements on that shard's node; there {@link TwoPhaseWorker}
 * does not run at all.
 */
public final class ConcurrencyLimits {

    /** Largest limit. */
    public static final int MAX = Limits.MAX;

    /** The most keys {@link #heldBackByKey} lists: 100. */
    public static final int MAX_KEYS_LISTED = Limits.MAX_KEYS_LISTED;

    private final Limits limits;

    ConcurrencyLimits(Limits limits) {
        this.limits = limits;
    }

    /**
     * The limits of one queue.
     *
     * @param defaultPerKey the limit of every key without its own; empty when the queue has none
     * @param keys the keys' own limits, by key
     */
    public record QueueLimits(OptionalInt defaultPerKey, Map<String, Integer> keys) {

        /**
         * Copies the keys.
         *
         * @param defaultPerKey the default per key, or empty
         * @param keys the keys' own limits
         */
        public QueueLimits {
            Objects.requireNonNull(defaultPerKey, "defaultPerKey");
            keys = Map.copyOf(keys);
        }

        /**
         * The limit that applies to {@code concurrencyKey}: its own, else the default.
         *
         * @param concurrencyKey a key
         * @return the limit, or empty when the key runs without one
         */
        public OptionalInt limitOf(String concurrencyKey) {
            Integer own = keys.get(concurrencyKey);
            return own != null ? OptionalInt.of(own) : defaultPerKey;
        }
    }

    /**
     * Sets the limit of every key of {@code queue} that has no limit of its own.
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue the queue, 1 to 128 characters
     * @param maxRunning 1 to {@link #MAX}
     * @throws IllegalArgumentException for a bad queue or limit (nothing written)
     */
    public void setDefault(DSLContext tx, String queue, int maxRunning) {
        limits.set(tx, queue, null, maxRunning);
    }

    /**
     * Sets the limit of one key of {@code queue}, which overrides the queue's default.
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue the queue, 1 to 128 characters
     * @param concurrencyKey the key, 1 to 256 characters
     * @param maxRunning 1 to {@link #MAX}
     * @throws IllegalArgumentException for a bad queue, key or limit (nothing written)
     */
    public void set(DSLContext tx, String queue, String concurrencyKey, int maxRunning) {
        limits.set(tx, queue, Objects.requireNonNull(concurrencyKey, "concurrencyKey"), maxRunning);
    }

    /**
     * Removes the default limit of {@code queue}'s keys (their rate, if any, stays).
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue the queue, 1 to 128 characters
     * @return whether it had one
     * @throws IllegalArgumentException for a bad queue (nothing removed)
     */
    public boolean removeDefault(DSLContext tx, String queue) {
        return limits.remove(tx, queue, null);
    }

    /**
     * Removes one key's own limit (the queue's default then applies to it, if any; its rate, if
     * any, stays).
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue the queue, 1 to 128 characters
     * @param concurrencyKey the key, 1 to 256 characters
     * @return whether it had one
     * @throws IllegalArgumentException for a bad queue or key (nothing removed)
     */
    public boolean remove(DSLContext tx, String queue, String concurrencyKey) {
        return limits.remove(tx, queue, Objects.requireNonNull(concurrencyKey, "concurrencyKey"));
    }

    /**
     * What the limits hold back in one queue now.
     *
     * @param keysAtLimit keys whose running jobs (leased, or held by a two-phase claim) reach their limit, or whose window holds
     *     as many starts as their {@linkplain RateLimits rate}
     * @param jobsHeldBack due pending jobs of those keys, counted up to the cap: they wait for
     *     their key, not for a worker
     * @param cap the count at which counting stopped
     */
    public record HeldBack(int keysAtLimit, int jobsHeldBack, int cap) {}

    /**
     * What the limits hold back in {@code queue} now, for gauges polled every few seconds: the
     * keys whose running jobs reach their limit or whose window of starts is full (rate limits),
     * and the due pending jobs of those keys, counted up to {@code cap}. One read-only statement
     * on the {@code JobQueue}'s own {@code DSLContext}; its work grows with the queue's running
     * keyed jobs (at most the sum of the limits), its keys that had a rate (one row each) and
     * {@code cap}. Jobs and starts of a transactional claim still open are not seen by it, nor is
     * a two-phase job whose hold ran out while its transaction is prepared (its slot's lock, held
     * until the transaction is finished, keeps the slot all the same).
     *
     * @param queue the queue, 1 to 128 characters
     * @param cap stop counting held-back jobs at this many, 1 to 1,000,000
     * @return the keys at their limit and the jobs they hold back
     * @throws IllegalArgumentException for a bad queue or cap
     */
    public HeldBack heldBack(String queue, int cap) {
        var read = limits.heldBack(queue, cap);
        return new HeldBack(read.getKey(), read.getValue(), cap);
    }

    /**
     * One key at a limit and what it holds back: a row of {@link #heldBackByKey}.
     *
     * @param concurrencyKey the key
     * @param running its running jobs (leased, or held by a two-phase claim)
     * @param jobsHeldBack its due pending jobs, counted up to the cap the call was given: they wait
     *     for their key, not for a worker
     */
    public record KeyHeldBack(String concurrencyKey, int running, int jobsHeldBack) {

        /**
         * Checks the values.
         *
         * @param concurrencyKey the key, not null
         * @param running not negative
         * @param jobsHeldBack not negative
         */
        public KeyHeldBack {
            Objects.requireNonNull(concurrencyKey, "concurrencyKey");
            if (running < 0 || jobsHeldBack < 0) {
                throw new IllegalArgumentException(
                        "running and jobsHeldBack must not be negative, were " + running + " and " + jobsHeldBack);
            }
        }
    }

    /**
     * The keys of {@code queue} that hold back the most jobs now, for gauges and pages that show
     * a few keys by name: at most {@code keys} of the keys at a limit (as {@link #heldBack} counts
     * them: running jobs that reach the key's concurrency limit, or a full window of starts),
     * those with the most due pending jobs first, ties in key order. A key below its limits is not
     * listed, however many jobs it has pending.
     *
     * <p>One read-only statement on the {@code JobQueue}'s own {@code DSLContext}, no lock: the
     * work of {@link #heldBack} to find the keys at a limit, then for each of them one bounded
     * index range over its due pending jobs (stopped at {@code cap}), a sort of those keys, and for
     * each key kept a count of its running jobs (about its limit). Its cost grows with the keys at a
     * limit, not with {@code keys}: every one of them is counted before the first {@code keys} are
     * kept, so a queue with 10,000 keys at their limit costs 10,000 ranges of up to {@code cap}
     * rows each. Jobs and starts of a transactional claim still open are not seen by it. On Citus
     * it is one statement per shard (a key's jobs and starts live on its shard; a key given several
     * shards has its figures added up), after a first call that also costs the one-server
     * statement, which Citus refuses.
     *
     * @param queue the queue, 1 to 128 characters
     * @param keys the most keys listed, 1 to {@value #MAX_KEYS_LISTED}
     * @param cap stop counting each key's held-back jobs at this many, 1 to 1,000,000
     * @return the keys, most held back first; empty when no key is at a limit
     * @throws IllegalArgumentException for a bad queue, {@code keys} or cap (nothing runs)
     */
    public List<KeyHeldBack> heldBackByKey(String queue, int keys, int cap) {
        return limits.heldBackByKey(queue, keys, cap);
    }

    /**
     * Reads the limits of {@code queue}.
     *
     * @param tx the caller's transaction, or an auto-commit context
     * @param queue the queue, 1 to 128 characters
     * @return its default and its keys' own limits
     */
    public QueueLimits of(DSLContext tx, String queue) {
        var read = limits.read(tx, queue);
        return new QueueLimits(read.getKey(), read.getValue());
    }
}

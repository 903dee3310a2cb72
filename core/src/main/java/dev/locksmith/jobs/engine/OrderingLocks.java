package dev.locksmith.jobs.engine;

import dev.locksmith.advisory.AdvisoryKey;
import dev.locksmith.jobs.NewJob;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;

/**
 * The locks an enqueue of jobs with ordering keys takes before it inserts them, so that within a
 * key, job ids follow the order in which the enqueues commit.
 *
 * <p>Why: a claim takes a keyed job only when no live job of its key has a lower id, judged in
 * the claim's snapshot. Ids come from a sequence when a row is inserted, not when it commits: two
 * producers of one key could insert ids 7 and 8 and commit 8 first. A claim would then take 8 as
 * the head while 7 is still invisible, and once 7 committed, another claim would take 7 (now the
 * lowest id) while 8 still runs: two jobs of one key at once. Serializing the producers of a key
 * closes that: a producer gets its ids only after the previous producer of the key has committed
 * (or rolled back), so a job that a snapshot sees implies every lower id of its key is visible
 * too, or gone for good.
 *
 * <p>What is locked, each a transaction-scoped advisory lock held until the enqueuing transaction
 * ends: for each queue with at most {@link #MAX_KEY_LOCKS} distinct keys in the call, the queue's
 * lock in shared mode and each key's lock in exclusive mode; for a queue with more keys, the
 * queue's lock in exclusive mode alone (so a bulk enqueue of ten thousand keys takes one lock, not
 * ten thousand slots of the server's lock table). Producers of different keys share the queue's
 * lock and never wait for each other; a bulk producer excludes every keyed producer of its queue
 * until it commits. All locks of a call are taken in one statement, in one global order (queue
 * locks, then key locks, each sorted by their two ints), so two calls never deadlock on each
 * other; several calls in one transaction can, when another transaction takes the same keys in
 * another order (PostgreSQL then aborts one of them: {@link dev.locksmith.exception.DeadlockException}).
 * Collisions of the 32-bit hashes only make unrelated producers wait.
 */
final class OrderingLocks {

    /** Distinct keys of one queue in one call that are locked one by one; more take the queue's lock. */
    static final int MAX_KEY_LOCKS = 32;

    private static final String QUEUE_NAMESPACE = "locksmith.jobs.ordered-queue";
    private static final String KEY_NAMESPACE = "locksmith.jobs.ordering-key:";
    private static final Comparator<AdvisoryKey> ORDER =
            Comparator.comparingInt(AdvisoryKey::classId).thenComparingInt(AdvisoryKey::objId);

    private OrderingLocks() {}

    /** Whether any of {@code jobs} has an ordering key. */
    static boolean needed(List<NewJob> jobs) {
        for (NewJob job : jobs) {
            if (job.orderingKey().isPresent()) {
                return true;
            }
        }
        return false;
    }

    /** Takes the locks for the keyed jobs among {@code jobs} in {@code tx}, waiting for other producers. */
    static void lock(DSLContext tx, List<NewJob> jobs) {
        Map<String, Set<String>> keysByQueue = new TreeMap<>();
        for (NewJob job : jobs) {
            job.orderingKey()
                    .ifPresent(key -> keysByQueue
                            .computeIfAbsent(job.queue(), q -> new TreeSet<>())
                            .add(key));
        }
        if (keysByQueue.isEmpty()) {
            return;
        }
        List<AdvisoryKey> sharedQueues = new ArrayList<>();
        List<AdvisoryKey> exclusiveQueues = new ArrayList<>();
        List<AdvisoryKey> keys = new ArrayList<>();
        keysByQueue.forEach((queue, queueKeys) -> {
            AdvisoryKey queueLock = AdvisoryKey.of(QUEUE_NAMESPACE, queue);
            if (queueKeys.size() > MAX_KEY_LOCKS) {
                exclusiveQueues.add(queueLock);
            } else {
                sharedQueues.add(queueLock);
                queueKeys.forEach(key -> keys.add(AdvisoryKey.of(KEY_NAMESPACE + queue, key)));
            }
        });
        List<Lock> queueLocks = new ArrayList<>();
        sharedQueues.forEach(k -> queueLocks.add(new Lock(k, true)));
        exclusiveQueues.forEach(k -> queueLocks.add(new Lock(k, false)));
        queueLocks.sort(Comparator.comparing(Lock::key, ORDER));
        keys.sort(ORDER);
        List<Field<?>> calls = new ArrayList<>();
        queueLocks.forEach(lock ->
                calls.add(call(lock.shared() ? "pg_advisory_xact_lock_shared" : "pg_advisory_xact_lock", lock.key())));
        keys.forEach(key -> calls.add(call("pg_advisory_xact_lock", key)));
        // One row, its expressions evaluated left to right: the locks are taken in list order.
        tx.select(calls).fetch();
    }

    private record Lock(AdvisoryKey key, boolean shared) {}

    private static Field<Object> call(String function, AdvisoryKey key) {
        return DSL.function(function, Object.class, DSL.val(key.classId()), DSL.val(key.objId()));
    }
}

package dev.locksmith.jobs;

import static dev.locksmith.codegen.Tables.JOBS;

import dev.locksmith.codegen.tables.records.JobsRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.jooq.Row2;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * The multi-row insert behind {@link JobQueue#enqueueAll}, with race-free unique keys:
 * {@code INSERT ... ON CONFLICT (queue, unique_key) WHERE <live> DO NOTHING RETURNING}, then a
 * look-up of the live jobs that won the conflicts. Jobs with ordering keys first take their keys'
 * locks ({@link OrderingLocks}), so the caller must be in a transaction then.
 */
final class Enqueuer {

    private Enqueuer() {}

    /**
     * Inserts {@code jobs}; returns one id per job, in order (the existing id for a live
     * duplicate), and sets {@code inserted[i]} for each job that was inserted rather than found.
     */
    static List<Long> insert(DSLContext tx, List<NewJob> jobs, @Nullable String traceparent, boolean[] inserted) {
        OrderingLocks.lock(tx, jobs);
        Long[] ids = new Long[jobs.size()];
        List<Integer> remaining = new ArrayList<>();
        for (int i = 0; i < jobs.size(); i++) {
            remaining.add(i);
        }
        // A conflicting live job may finish between our INSERT and our look-up; then the key is
        // free again and the next round inserts. Each round makes progress unless that race
        // repeats, so a small bound is plenty.
        for (int round = 0; !remaining.isEmpty(); round++) {
            if (round == 10) {
                throw new IllegalStateException("unique keys kept changing state while enqueueing");
            }
            remaining = insertRound(tx, jobs, remaining, ids, traceparent, inserted);
        }
        return List.of(ids);
    }

    private static List<Integer> insertRound(
            DSLContext tx,
            List<NewJob> jobs,
            List<Integer> indexes,
            Long[] ids,
            @Nullable String traceparent,
            boolean[] fresh) {
        var insert = tx.insertInto(
                JOBS,
                JOBS.QUEUE,
                JOBS.SHARD,
                JOBS.KIND,
                JOBS.PAYLOAD,
                JOBS.PRIORITY,
                JOBS.RUN_AT,
                JOBS.MAX_ATTEMPTS,
                JOBS.UNIQUE_KEY,
                JOBS.TRACEPARENT,
                JOBS.ORDERING_KEY);
        for (int i : indexes) {
            NewJob job = jobs.get(i);
            insert = insert.values(
                    DSL.val(job.queue()),
                    DSL.val(job.shard()),
                    DSL.val(job.kind()),
                    DSL.val(JSONB.valueOf(job.payload())),
                    DSL.val((short) job.priority()),
                    JobQueue.after(job.delay()),
                    DSL.val(job.maxAttempts()),
                    DSL.val(job.uniqueKey().orElse(null)),
                    DSL.val(traceparent, JOBS.TRACEPARENT),
                    DSL.val(job.orderingKey().orElse(null), JOBS.ORDERING_KEY));
        }
        // Ids come from the sequence in VALUES order, so sorting the returned rows by id lines
        // them up with the inputs; conflicting rows are the gaps.
        List<JobsRecord> inserted = new ArrayList<>(insert.onConflict(JOBS.QUEUE, JOBS.UNIQUE_KEY)
                .where(JOBS.UNIQUE_KEY.isNotNull().and(JOBS.STATUS.in(JobQueue.LIVE)))
                .doNothing()
                .returning(JOBS.ID, JOBS.QUEUE, JOBS.UNIQUE_KEY)
                .fetch());
        inserted.sort(Comparator.comparing(JobsRecord::getId));
        List<Integer> conflicts = new ArrayList<>();
        int next = 0;
        for (int i : indexes) {
            NewJob job = jobs.get(i);
            if (next < inserted.size()
                    && job.queue().equals(inserted.get(next).getQueue())
                    && Objects.equals(
                            job.uniqueKey().orElse(null), inserted.get(next).getUniqueKey())) {
                ids[i] = inserted.get(next++).getId();
                fresh[i] = true;
            } else {
                conflicts.add(i);
            }
        }
        if (conflicts.isEmpty()) {
            return conflicts;
        }
        List<Row2<String, String>> keys = conflicts.stream()
                .map(i -> DSL.row(jobs.get(i).queue(), jobs.get(i).uniqueKey().orElseThrow()))
                .toList();
        Map<List<String>, Long> existing = new HashMap<>();
        tx.select(JOBS.ID, JOBS.QUEUE, JOBS.UNIQUE_KEY)
                .from(JOBS)
                .where(DSL.row(JOBS.QUEUE, JOBS.UNIQUE_KEY).in(keys))
                .and(JOBS.STATUS.in(JobQueue.LIVE))
                .fetch()
                .forEach(r -> existing.put(List.of(r.value2(), r.value3()), r.value1()));
        List<Integer> retry = new ArrayList<>();
        for (int i : conflicts) {
            Long id = existing.get(
                    List.of(jobs.get(i).queue(), jobs.get(i).uniqueKey().orElseThrow()));
            if (id == null) {
                retry.add(i);
            } else {
                ids[i] = id;
            }
        }
        return retry;
    }
}

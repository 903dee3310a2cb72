package dev.locksmith.jobs.engine;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_UNIQUE_KEYS;

import dev.locksmith.codegen.Routines;
import dev.locksmith.codegen.tables.records.JobsRecord;
import dev.locksmith.internal.Binds;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.Row2;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;

/**
 * The insert behind {@code JobQueue.enqueueAll}: one {@code INSERT ... SELECT ... FROM
 * unnest(<one array per column>) RETURNING id}. Jobs with ordering keys first take their keys'
 * locks ({@link OrderingLocks}), so the caller must be in a transaction then.
 *
 * <p>When a job of the call has a unique key, the statement first takes the keys in
 * {@code job_unique_keys} ({@code ON CONFLICT DO NOTHING}) and inserts only the jobs whose keys it
 * got ({@link #takingKeys}: jobs is partitioned into generations, and a unique index over it would
 * have to hold the generation). Only when a key conflicted does a look-up of the live jobs that
 * won follow: race-free unique keys. On Citus's layout (jobs distributed, not partitioned) the
 * statement is {@code ... ON CONFLICT (queue, unique_key, shard) WHERE <live> DO NOTHING}. Without
 * unique keys nothing can conflict. With NOTIFY on, the same
 * statement notifies the call's queues (a one-time filter, evaluated once before the first row),
 * so an enqueue is one round trip.
 *
 * <p>Why arrays: the statement text and its parameters are the same for 1 job or 10,000, so it
 * is rendered once and prepared once per connection, and the client binds ten arrays instead of
 * building, rendering and binding a {@code VALUES} list of ten values per job (which cost about
 * 20 us of client CPU per job).
 */
public final class Enqueuer {

    private static final String QUEUES = "queues";
    private static final String SHARDS = "shards";
    private static final String KINDS = "kinds";
    private static final String PAYLOADS = "payloads";
    private static final String PRIORITIES = "priorities";
    private static final String DELAYS = "delays_us";
    private static final String MAX_ATTEMPTS = "max_attempts";
    private static final String UNIQUE_KEYS = "unique_keys";
    private static final String ORDERING_KEYS = "ordering_keys";
    private static final String CONCURRENCY_KEYS = "concurrency_keys";
    private static final String TRACEPARENT = "traceparent";
    private static final String NOTIFY = "notify_queues";

    /** The insert statements: without NOTIFY, and sending it inside the caller's transaction. */
    private final Statements plain;

    private final Statements notifying;

    private final QueueContext context;
    private final WakeUps wakeUps;

    /** The inserts, for one way of waking workers. */
    private record Statements(
            boolean notifies,
            RenderedQuery insert,
            RenderedQuery insertDistributed,
            RenderedQuery insertUnique,
            RenderedQuery insertUniquePerShard) {

        /**
         * {@code insert} for jobs without unique keys (a plain insert, returning ids), into the
         * current generation's partition; {@code insertUnique} for calls with one (the rows whose
         * key is taken are left out; the rows returned say which were inserted). On Citus's layout
         * (jobs distributed, not partitioned): {@code insertDistributed}, the plain insert without
         * a generation, and {@code insertUniquePerShard}, where a unique index over (queue,
         * unique_key, shard) keeps keys unique.
         */
        static Statements of(DSLContext dsl, boolean notify) {
            var rows = rows(notify);
            return new Statements(
                    notify,
                    RenderedQuery.of(dsl, inGeneration(dsl, rows).returningResult(JOBS.ID)),
                    RenderedQuery.of(dsl, columns(dsl).select(rows).returningResult(JOBS.ID)),
                    RenderedQuery.of(dsl, takingKeys(dsl, rows)),
                    RenderedQuery.of(
                            dsl,
                            columns(dsl)
                                    .select(rows)
                                    .onConflict(JOBS.QUEUE, JOBS.UNIQUE_KEY, JOBS.SHARD)
                                    .where(JOBS.UNIQUE_KEY.isNotNull().and(JOBS.STATUS.in(Sql.LIVE)))
                                    .doNothing()
                                    .returningResult(JOBS.ID, JOBS.QUEUE, JOBS.UNIQUE_KEY)));
        }
    }

    /**
     * The statements for one queue's settings.
     *
     * @param context the queue's construction context (schema mapping, execution mode) and
     *     settings
     * @param wakeUps how an enqueue wakes workers
     */
    Enqueuer(QueueContext context, WakeUps wakeUps) {
        this.context = context;
        this.wakeUps = wakeUps;
        this.plain = Statements.of(context.dsl, false);
        this.notifying = Statements.of(context.dsl, true);
    }

    /**
     * Enqueues {@code jobs} with one multi-row {@code INSERT} in the caller's transaction (see
     * {@code JobQueue.enqueueAll}); in auto-commit mode, a call with ordering keys runs in a
     * transaction of its own, so that the keys' locks last until the rows commit.
     *
     * @param tx the caller's transaction (or an auto-commit context)
     * @param jobs the jobs, no nulls; empty sends nothing
     * @return one id per job, in the order given
     */
    public List<Long> enqueueAll(DSLContext tx, List<NewJob> jobs) {
        DSLContext ctx = context.on(tx);
        Objects.requireNonNull(jobs, "jobs");
        jobs.forEach(j -> Objects.requireNonNull(j, "jobs must not contain null"));
        if (jobs.isEmpty()) {
            return List.of();
        }
        String traceparent = context.observing.traceparent();
        boolean autoCommit = Errors.translating(() -> ctx.connectionResult(java.sql.Connection::getAutoCommit));
        Set<String> queues = new LinkedHashSet<>();
        jobs.forEach(job -> queues.add(job.queue()));
        WakeUps.Plan plan = wakeUps.plan(ctx, autoCommit, queues, true);
        Statements statements = plan.notifies() ? notifying : plain;
        List<Long> ids;
        try {
            if (OrderingLocks.needed(jobs) && autoCommit) {
                // The keys' locks must last until the rows commit: one transaction of our own.
                ids = Errors.translating(
                        () -> ctx.transactionResult(c -> insertReported(c.dsl(), statements, jobs, traceparent)));
            } else {
                ids = Errors.translating(() -> insertReported(ctx, statements, jobs, traceparent));
            }
        } catch (RuntimeException | Error e) {
            wakeUps.failed(plan);
            throw e;
        }
        wakeUps.returned(plan, queues);
        return ids;
    }

    private List<Long> insertReported(
            DSLContext ctx, Statements statements, List<NewJob> jobs, @Nullable String traceparent) {
        boolean[] inserted = new boolean[jobs.size()];
        List<Long> ids = insert(ctx, statements, jobs, traceparent, inserted, context.shards(ctx));
        if (context.observing.enabled()) {
            Map<List<String>, Integer> counts = new java.util.LinkedHashMap<>();
            for (int i = 0; i < jobs.size(); i++) {
                if (inserted[i]) {
                    counts.merge(List.of(jobs.get(i).queue(), jobs.get(i).kind()), 1, Integer::sum);
                }
            }
            counts.forEach((key, count) -> context.observing.jobsEnqueued(key.get(0), key.get(1), count));
        }
        return ids;
    }

    /**
     * The shard a job is written to. On plain PostgreSQL (no distributed shards) the one it was
     * given. On Citus, a job given shard 0 (the default) is placed by the library: a job with a
     * unique key on the shard its queue and key hash to, so that the per-shard unique index
     * still allows one live job per key in the queue; a job with an ordering key likewise, so
     * that a key's jobs share a shard and a single-shard claim sees all of them; a job with a
     * concurrency key likewise, so that the keyed claim of that shard counts every running job of
     * the key ({@link KeyedShardClaims}); any other on a random shard, spreading the queue over the
     * cluster. A job given another shard stays there (its keys' guarantees then hold per shard).
     */
    static int shardFor(NewJob job, int distributedShards) {
        if (distributedShards == 0) {
            return job.shard();
        }
        if (job.shard() >= distributedShards) {
            throw new IllegalArgumentException("shard must be below " + distributedShards
                    + " on this Citus cluster (the jobs table's shard count), was " + job.shard()
                    + ": a claim of every shard would never reach it");
        }
        if (job.shard() != 0) {
            return job.shard();
        }
        if (job.uniqueKey().isPresent() && job.orderingKey().isPresent()) {
            throw new IllegalArgumentException("on Citus a job with both a unique key and an ordering key needs a "
                    + "shard (the two keys may hash to different shards, and each guarantee holds within one): "
                    + "give it NewJob.Builder#shard, the same for every job of its ordering key");
        }
        java.util.Optional<String> key = job.uniqueKey().or(job::orderingKey);
        if (job.concurrencyKey().isPresent()) {
            // the same string hashes to the same shard: a key that is both is placed by either
            if (key.isPresent() && !key.equals(job.concurrencyKey())) {
                throw new IllegalArgumentException("on Citus a job with a concurrency key and a different "
                        + (job.uniqueKey().isPresent() ? "unique" : "ordering")
                        + " key needs a shard (the two keys may hash to different shards, and each guarantee "
                        + "holds within one): give it NewJob.Builder#shard, the same for every job of its "
                        + "concurrency key");
            }
            key = job.concurrencyKey();
        }
        if (key.isPresent()) {
            // String.hashCode is specified, so every JVM places a key on the same shard.
            return Math.floorMod((job.queue() + '\u0000' + key.get()).hashCode(), distributedShards);
        }
        return java.util.concurrent.ThreadLocalRandom.current().nextInt(distributedShards);
    }

    /** The insert without a generation (Citus's layout): the columns of {@link #rows}. */
    private static org.jooq.InsertValuesStepN<JobsRecord> columns(DSLContext dsl) {
        return dsl.insertInto(JOBS).columns(IN_GENERATION.subList(0, IN_GENERATION.size() - 1));
    }

    /** The columns an insert into the current generation writes: those of {@link #rows}, and the slot. */
    private static final List<Field<?>> IN_GENERATION = List.of(
            JOBS.QUEUE,
            JOBS.SHARD,
            JOBS.KIND,
            JOBS.PAYLOAD,
            JOBS.PRIORITY,
            JOBS.RUN_AT,
            JOBS.MAX_ATTEMPTS,
            JOBS.UNIQUE_KEY,
            JOBS.TRACEPARENT,
            JOBS.ORDERING_KEY,
            JOBS.CONCURRENCY_KEY,
            JOBS.SLOT);

    /** {@link #IN_GENERATION} after the id, for an insert that draws its ids itself. */
    private static final List<Field<?>> WITH_ID = java.util.stream.Stream.concat(
                    java.util.stream.Stream.of(JOBS.ID), IN_GENERATION.stream())
            .toList();

    /** The columns of {@link #rows}, in order. */
    private static final String[] NAMES = {
        "queue",
        "shard",
        "kind",
        "payload",
        "priority",
        "run_at",
        "max_attempts",
        "unique_key",
        "traceparent",
        "ordering_key",
        "concurrency_key"
    };

    /**
     * The current generation's slot, read once per statement (an uncorrelated scalar subquery is
     * an init plan): the column default reads it for every row, which cost about a quarter of a
     * large insert's server time.
     */
    private static Field<Short> currentSlot() {
        return DSL.field(DSL.select(Routines.jobSlot()));
    }

    /** The plain insert into the current generation's partition: {@code rows} with the slot read once. */
    private static org.jooq.InsertOnDuplicateStep<JobsRecord> inGeneration(
            DSLContext dsl, org.jooq.Select<? extends org.jooq.Record> rows) {
        Table<?> r = rows.asTable("r", NAMES);
        List<Field<?>> selected = new ArrayList<>();
        for (String name : NAMES) {
            selected.add(DSL.field(DSL.name("r", name)));
        }
        selected.add(currentSlot());
        return dsl.insertInto(JOBS)
                .columns(IN_GENERATION)
                .select(DSL.select(selected).from(r));
    }

    /**
     * The insert of a call with unique keys on the partitioned layout: {@code WITH t AS (SELECT
     * nextval(<jobs' id sequence>) AS id, r.* FROM (<rows>) r), k AS (INSERT INTO job_unique_keys
     * SELECT queue, unique_key, id FROM t WHERE unique_key IS NOT NULL ON CONFLICT DO NOTHING
     * RETURNING job_id) INSERT INTO jobs SELECT * FROM t WHERE unique_key IS NULL OR id IN (SELECT
     * job_id FROM k) RETURNING id, queue, unique_key}. The keys are taken before the jobs, with
     * their ids, so a key a live job holds (or another call in progress takes) leaves its job out,
     * as {@code ON CONFLICT DO NOTHING} did; the table's trigger then finds each inserted job's key
     * taken by the job itself. The ids are drawn in the arrays' order, as the plain insert's are.
     */
    private static org.jooq.ResultQuery<?> takingKeys(DSLContext dsl, org.jooq.Select<? extends org.jooq.Record> rows) {
        Table<?> r = rows.asTable("r", NAMES);
        var sequence = DSL.sequence(DSL.name(JOBS.getSchema().getName(), "jobs_id_seq"), SQLDataType.BIGINT);
        var numbered = DSL.name("t")
                .as(DSL.select(
                                sequence.nextval().as("id"),
                                r.asterisk(),
                                currentSlot().as("slot"))
                        .from(r));
        Field<Long> id = DSL.field(DSL.name("t", "id"), SQLDataType.BIGINT);
        Field<String> queue = DSL.field(DSL.name("t", "queue"), SQLDataType.VARCHAR);
        Field<String> uniqueKey = DSL.field(DSL.name("t", "unique_key"), SQLDataType.VARCHAR);
        var keys = DSL.name("k")
                .as(DSL.insertInto(
                                JOB_UNIQUE_KEYS,
                                JOB_UNIQUE_KEYS.QUEUE,
                                JOB_UNIQUE_KEYS.UNIQUE_KEY,
                                JOB_UNIQUE_KEYS.JOB_ID)
                        .select(DSL.select(queue, uniqueKey, id).from(numbered).where(uniqueKey.isNotNull()))
                        .onConflictDoNothing()
                        .returningResult(JOB_UNIQUE_KEYS.JOB_ID));
        List<Field<?>> selected = new ArrayList<>();
        selected.add(id);
        for (String name : NAMES) {
            selected.add(DSL.field(DSL.name("t", name)));
        }
        selected.add(DSL.field(DSL.name("t", "slot")));
        return dsl.with(numbered)
                .with(keys)
                .insertInto(JOBS)
                .columns(WITH_ID)
                .select(DSL.select(selected)
                        .from(numbered)
                        .where(uniqueKey
                                .isNull()
                                .or(id.in(DSL.select(keys.field(JOB_UNIQUE_KEYS.JOB_ID))
                                        .from(keys)))))
                .returningResult(JOBS.ID, JOBS.QUEUE, JOBS.UNIQUE_KEY);
    }

    /** The rows to insert: one per array element, the arrays side by side. */
    private static org.jooq.Select<
                    ? extends
                            org.jooq.Record11<
                                    String,
                                    Integer,
                                    String,
                                    JSONB,
                                    Short,
                                    java.time.OffsetDateTime,
                                    Integer,
                                    String,
                                    String,
                                    String,
                                    String>>
            rows(boolean notify) {
        Table<?> t = DSL.table(
                        "unnest({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9})",
                        DSL.param(QUEUES, SQLDataType.VARCHAR.array()),
                        DSL.param(SHARDS, SQLDataType.INTEGER.array()),
                        DSL.param(KINDS, SQLDataType.VARCHAR.array()),
                        DSL.param(PAYLOADS, SQLDataType.VARCHAR.array()),
                        DSL.param(PRIORITIES, SQLDataType.INTEGER.array()),
                        DSL.param(DELAYS, SQLDataType.BIGINT.array()),
                        DSL.param(MAX_ATTEMPTS, SQLDataType.INTEGER.array()),
                        DSL.param(UNIQUE_KEYS, SQLDataType.VARCHAR.array()),
                        DSL.param(ORDERING_KEYS, SQLDataType.VARCHAR.array()),
                        DSL.param(CONCURRENCY_KEYS, SQLDataType.VARCHAR.array()))
                .as(
                        "t",
                        "queue",
                        "shard",
                        "kind",
                        "payload",
                        "priority",
                        "delay_us",
                        "max_attempts",
                        "unique_key",
                        "ordering_key",
                        "concurrency_key");
        var select = DSL.select(
                        DSL.field(DSL.name("t", "queue"), SQLDataType.VARCHAR),
                        DSL.field(DSL.name("t", "shard"), SQLDataType.INTEGER),
                        DSL.field(DSL.name("t", "kind"), SQLDataType.VARCHAR),
                        DSL.field(DSL.name("t", "payload"), SQLDataType.VARCHAR).cast(SQLDataType.JSONB),
                        DSL.field(DSL.name("t", "priority"), SQLDataType.INTEGER)
                                .cast(SQLDataType.SMALLINT),
                        // statement_timestamp() + delay, exact to the microsecond
                        DSL.field(
                                "{0} + {1} * interval '1 microsecond'",
                                SQLDataType.TIMESTAMPWITHTIMEZONE,
                                Sql.statementTime(),
                                DSL.field(DSL.name("t", "delay_us"), SQLDataType.BIGINT)),
                        DSL.field(DSL.name("t", "max_attempts"), SQLDataType.INTEGER),
                        DSL.field(DSL.name("t", "unique_key"), SQLDataType.VARCHAR),
                        DSL.param(TRACEPARENT, SQLDataType.VARCHAR),
                        DSL.field(DSL.name("t", "ordering_key"), SQLDataType.VARCHAR),
                        DSL.field(DSL.name("t", "concurrency_key"), SQLDataType.VARCHAR))
                .from(t);
        if (!notify) {
            return select;
        }
        // An uncorrelated condition: a one-time filter, its init plan evaluated once per statement.
        Field<String> queue = DSL.field(DSL.name("n", "queue"), SQLDataType.VARCHAR);
        Field<Integer> notified =
                DSL.field(DSL.select(DSL.count(DSL.function("pg_notify", Object.class, DSL.inline(Sql.CHANNEL), queue)))
                        .from(DSL.table("unnest({0})", DSL.param(NOTIFY, SQLDataType.VARCHAR.array()))
                                .as("n", "queue")));
        return select.where(notified.ge(DSL.inline(0)));
    }

    /**
     * Inserts {@code jobs}; returns one id per job, in order (the existing id for a live
     * duplicate), and sets {@code inserted[i]} for each job that was inserted rather than found.
     */
    private List<Long> insert(
            DSLContext tx,
            Statements statements,
            List<NewJob> jobs,
            @Nullable String traceparent,
            boolean[] inserted,
            int distributedShards) {
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
            remaining = insertRound(tx, statements, jobs, remaining, ids, traceparent, inserted, distributedShards);
        }
        return List.of(ids);
    }

    /** One row returned by the insert. */
    private record Inserted(long id, String queue, @Nullable String uniqueKey) {}

    private List<Integer> insertRound(
            DSLContext tx,
            Statements statements,
            List<NewJob> jobs,
            List<Integer> indexes,
            Long[] ids,
            @Nullable String traceparent,
            boolean[] fresh,
            int distributedShards) {
        int n = indexes.size();
        List<String> queues = new ArrayList<>(n);
        List<Integer> shards = new ArrayList<>(n);
        List<String> kinds = new ArrayList<>(n);
        List<String> payloads = new ArrayList<>(n);
        List<Integer> priorities = new ArrayList<>(n);
        List<Long> delays = new ArrayList<>(n);
        List<Integer> maxAttempts = new ArrayList<>(n);
        List<@Nullable String> uniqueKeys = new ArrayList<>(n);
        List<@Nullable String> orderingKeys = new ArrayList<>(n);
        List<@Nullable String> concurrencyKeys = new ArrayList<>(n);
        for (int i : indexes) {
            NewJob job = jobs.get(i);
            queues.add(job.queue());
            shards.add(shardFor(job, distributedShards));
            kinds.add(job.kind());
            payloads.add(job.payload());
            priorities.add(job.priority());
            delays.add(micros(job.delay()));
            maxAttempts.add(job.maxAttempts());
            uniqueKeys.add(job.uniqueKey().orElse(null));
            orderingKeys.add(job.orderingKey().orElse(null));
            concurrencyKeys.add(job.concurrencyKey().orElse(null));
        }
        boolean unique = uniqueKeys.stream().anyMatch(Objects::nonNull);
        RenderedQuery statement = !unique
                ? distributedShards > 0 ? statements.insertDistributed() : statements.insert()
                : distributedShards > 0 ? statements.insertUniquePerShard() : statements.insertUnique();
        Binds binds = statement
                .binds()
                .setStrings(QUEUES, queues)
                .setInts(SHARDS, shards)
                .setStrings(KINDS, kinds)
                .setStrings(PAYLOADS, payloads)
                .setInts(PRIORITIES, priorities)
                .setLongs(DELAYS, delays)
                .setInts(MAX_ATTEMPTS, maxAttempts)
                .setStrings(UNIQUE_KEYS, uniqueKeys)
                .setStrings(ORDERING_KEYS, orderingKeys)
                .setStrings(CONCURRENCY_KEYS, concurrencyKeys)
                .set(TRACEPARENT, traceparent);
        if (statements.notifies()) {
            binds.setStrings(NOTIFY, new ArrayList<>(new java.util.LinkedHashSet<>(queues)));
        }
        // Ids come from the sequence in the arrays' order, so sorting the returned ids lines them
        // up with the inputs; conflicting rows are the gaps.
        if (!unique) {
            List<Long> inserted = new ArrayList<>(statement.fetch(tx, binds, row -> row.getLong(1)));
            if (inserted.size() != n) {
                throw new IllegalStateException("inserted " + inserted.size() + " of " + n + " jobs");
            }
            inserted.sort(Comparator.naturalOrder());
            for (int k = 0; k < n; k++) {
                ids[indexes.get(k)] = inserted.get(k);
                fresh[indexes.get(k)] = true;
            }
            return List.of();
        }
        List<Inserted> inserted = new ArrayList<>(
                statement.fetch(tx, binds, row -> new Inserted(row.getLong(1), row.getString(2), row.getString(3))));
        inserted.sort(Comparator.comparingLong(Inserted::id));
        List<Integer> conflicts = new ArrayList<>();
        int next = 0;
        for (int i : indexes) {
            NewJob job = jobs.get(i);
            if (next < inserted.size()
                    && job.queue().equals(inserted.get(next).queue())
                    && Objects.equals(
                            job.uniqueKey().orElse(null), inserted.get(next).uniqueKey())) {
                ids[i] = inserted.get(next++).id();
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
                .and(JOBS.STATUS.in(Sql.LIVE))
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

    /** A delay in whole microseconds, the resolution of {@code timestamptz}. */
    private static long micros(Duration delay) {
        return TimeUnit.SECONDS.toMicros(delay.getSeconds()) + delay.getNano() / 1000;
    }
}

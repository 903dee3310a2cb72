package dev.locksmith.schedules;

import static dev.locksmith.codegen.Tables.SCHEDULES;

import dev.locksmith.Locksmith;
import dev.locksmith.codegen.tables.records.SchedulesRecord;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.internal.Texts;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.jooq.impl.DSL;

/**
 * Recurring jobs in the {@code schedules} table: {@linkplain #register register} a
 * {@link Schedule} by name (again to change it, without a restart), {@linkplain #pause pause},
 * {@linkplain #resume resume}, {@linkplain #remove remove}, {@linkplain #find read} it with its
 * next occurrence; and {@linkplain #runDue() tick}, which enqueues every due occurrence into the
 * {@link JobQueue} as a job with the unique key {@code schedule:<name>:<occurrence>}. Run ticks
 * with a {@link SchedulerWorker}, every few seconds, in as many JVMs as you like.
 *
 * <p><b>Each occurrence is enqueued once, however many schedulers tick.</b> A tick locks the due
 * rows ({@code next_run_at <= now}, not paused) with {@code SELECT ... FOR UPDATE SKIP LOCKED},
 * and in the same transaction enqueues their occurrences and moves {@code next_run_at} past now
 * and {@code last_occurrence} up to the latest occurrence it handled. Another scheduler ticking
 * meanwhile skips the locked rows rather than waiting; once the transaction commits, the rows are
 * no longer due, and if it rolls back, neither the jobs nor the move happened. So an occurrence
 * is enqueued by the one transaction that moves the schedule past it, and PostgreSQL's row lock
 * lets one transaction at a time do that. Two more guards: a tick never enqueues an occurrence at
 * or before {@code last_occurrence} (read under the lock), so a schedule whose
 * {@code next_run_at} went back (re-registered by a JVM whose clock is behind) repeats nothing;
 * and the unique key makes a second enqueue of an occurrence whose job is still pending or
 * running return that job instead of inserting one ({@link JobQueue#enqueue}).
 *
 * <p><b>Time</b> is the database's ({@code now()}: the start of the tick's or registration's
 * transaction) unless {@link SchedulesConfig#clock()} gives a clock, or a caller passes it to
 * {@link #runDue(Instant)}. A tick that finds overdue occurrences (after downtime) follows the
 * schedule's {@link MisfirePolicy}. {@link #register} computes the first occurrence strictly
 * after now; re-registering a schedule with the same trigger keeps its {@code next_run_at}.
 *
 * <p>Every method that changes a schedule runs in the caller's transaction ({@code tx}, or an
 * auto-commit context). Thread-safe; share one instance.
 */
public final class Schedules {

    private final SchedulesConfig config;
    private final SchemaMapping schema;
    private final Ticker ticker;

    /**
     * Schedules in {@code locksmith}'s environment with the default settings.
     *
     * @param locksmith the environment: schema, execution mode, observer
     */
    public Schedules(Locksmith locksmith) {
        this(locksmith.dsl());
    }

    /**
     * Schedules in {@code locksmith}'s environment with other settings.
     *
     * @param locksmith the environment: schema, execution mode, observer
     * @param config the settings
     */
    public Schedules(Locksmith locksmith, SchedulesConfig config) {
        this(locksmith.dsl(), config);
    }

    /**
     * Schedules on {@code dsl} with {@link SchedulesConfig#defaults()}.
     *
     * @param dsl runs the ticks (each in its own transactions); its settings (schema mapping) and
     *     observer apply to every call
     */
    public Schedules(DSLContext dsl) {
        this(dsl, SchedulesConfig.defaults());
    }

    /**
     * Schedules on {@code dsl} with other settings.
     *
     * @param dsl runs the ticks (each in its own transactions); its settings (schema mapping) and
     *     observer apply to every call
     * @param config clock, misfire grace, catch-up cap, batch size, queue settings
     */
    public Schedules(DSLContext dsl, SchedulesConfig config) {
        Objects.requireNonNull(dsl, "dsl");
        this.config = Objects.requireNonNull(config, "config");
        this.schema = SchemaMapping.of(dsl);
        this.ticker = new Ticker(dsl, config, schema, new JobQueue(dsl, config.queueConfig()));
    }

    /** {@return the settings in force, as given at construction} */
    public SchedulesConfig config() {
        return config;
    }

    /**
     * The unique key of the job of one occurrence: {@code schedule:<name>:<occurrence>}, the
     * occurrence as {@link Instant#toString()} ({@code schedule:nightly:2026-03-01T02:00:00Z}).
     * A handler finds its occurrence in {@code job.uniqueKey()}.
     *
     * @param name the schedule's name
     * @param occurrence the occurrence
     * @return the key
     */
    public static String uniqueKey(String name, Instant occurrence) {
        return "schedule:" + Objects.requireNonNull(name, "name") + ":"
                + Objects.requireNonNull(occurrence, "occurrence");
    }

    // ------------------------------------------------------------------ definitions

    /**
     * Creates the schedule, or changes the one of that name, in the caller's transaction, with
     * one {@code INSERT ... ON CONFLICT (name) DO UPDATE}: at start-up every JVM can register
     * its schedules. A new schedule, or one whose trigger changed, gets the first occurrence
     * strictly after now as {@code next_run_at} (overdue occurrences of the old trigger are
     * dropped); one whose trigger is unchanged keeps its {@code next_run_at}, and a registration
     * that changes nothing writes nothing. The template and misfire policy apply from the next
     * tick. Registration leaves {@code paused} as it was. While a tick holds the row, this waits
     * for it.
     *
     * @param tx the caller's transaction (or an auto-commit context)
     * @param schedule the schedule
     * @return the schedule as stored now
     */
    public RegisteredSchedule register(DSLContext tx, Schedule schedule) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(schedule, "schedule");
        Trigger trigger = schedule.trigger();
        String cron = trigger instanceof Trigger.Cron c ? c.expression() : null;
        String zone = trigger instanceof Trigger.Cron c ? c.zone().getId() : null;
        Long intervalMs = trigger instanceof Trigger.Interval i ? i.interval().toMillis() : null;
        NewJob job = schedule.template();
        return Errors.translating(() -> {
            Instant now = now(ctx);
            Instant next = trigger.after(now)
                    .orElseThrow(() -> new IllegalArgumentException(
                            "schedule " + schedule.name() + " has no occurrence after " + now));
            Condition sameTrigger = SCHEDULES
                    .CRON
                    .isNotDistinctFrom(DSL.excluded(SCHEDULES.CRON))
                    .and(SCHEDULES.ZONE.isNotDistinctFrom(DSL.excluded(SCHEDULES.ZONE)))
                    .and(SCHEDULES.INTERVAL_MS.isNotDistinctFrom(DSL.excluded(SCHEDULES.INTERVAL_MS)));
            Condition changed = DSL.row(
                            SCHEDULES.CRON,
                            SCHEDULES.ZONE,
                            SCHEDULES.INTERVAL_MS,
                            SCHEDULES.QUEUE,
                            SCHEDULES.KIND,
                            SCHEDULES.PAYLOAD,
                            SCHEDULES.PRIORITY,
                            SCHEDULES.MAX_ATTEMPTS,
                            SCHEDULES.SHARD,
                            SCHEDULES.ORDERING_KEY,
                            SCHEDULES.CONCURRENCY_KEY,
                            SCHEDULES.MISFIRE)
                    .isDistinctFrom(DSL.row(
                            DSL.excluded(SCHEDULES.CRON),
                            DSL.excluded(SCHEDULES.ZONE),
                            DSL.excluded(SCHEDULES.INTERVAL_MS),
                            DSL.excluded(SCHEDULES.QUEUE),
                            DSL.excluded(SCHEDULES.KIND),
                            DSL.excluded(SCHEDULES.PAYLOAD),
                            DSL.excluded(SCHEDULES.PRIORITY),
                            DSL.excluded(SCHEDULES.MAX_ATTEMPTS),
                            DSL.excluded(SCHEDULES.SHARD),
                            DSL.excluded(SCHEDULES.ORDERING_KEY),
                            DSL.excluded(SCHEDULES.CONCURRENCY_KEY),
                            DSL.excluded(SCHEDULES.MISFIRE)));
            Optional<SchedulesRecord> written = ctx.insertInto(SCHEDULES)
                    .set(SCHEDULES.NAME, schedule.name())
                    .set(SCHEDULES.CRON, cron)
                    .set(SCHEDULES.ZONE, zone)
                    .set(SCHEDULES.INTERVAL_MS, intervalMs)
                    .set(SCHEDULES.QUEUE, job.queue())
                    .set(SCHEDULES.KIND, job.kind())
                    .set(SCHEDULES.PAYLOAD, JSONB.valueOf(job.payload()))
                    .set(SCHEDULES.PRIORITY, (short) job.priority())
                    .set(SCHEDULES.MAX_ATTEMPTS, job.maxAttempts())
                    .set(SCHEDULES.SHARD, job.shard())
                    .set(SCHEDULES.ORDERING_KEY, job.orderingKey().orElse(null))
                    .set(SCHEDULES.CONCURRENCY_KEY, job.concurrencyKey().orElse(null))
                    .set(SCHEDULES.MISFIRE, schedule.misfire().dbValue())
                    .set(SCHEDULES.NEXT_RUN_AT, ScheduleRows.at(next))
                    .onConflict(SCHEDULES.NAME)
                    .doUpdate()
                    .set(SCHEDULES.CRON, DSL.excluded(SCHEDULES.CRON))
                    .set(SCHEDULES.ZONE, DSL.excluded(SCHEDULES.ZONE))
                    .set(SCHEDULES.INTERVAL_MS, DSL.excluded(SCHEDULES.INTERVAL_MS))
                    .set(SCHEDULES.QUEUE, DSL.excluded(SCHEDULES.QUEUE))
                    .set(SCHEDULES.KIND, DSL.excluded(SCHEDULES.KIND))
                    .set(SCHEDULES.PAYLOAD, DSL.excluded(SCHEDULES.PAYLOAD))
                    .set(SCHEDULES.PRIORITY, DSL.excluded(SCHEDULES.PRIORITY))
                    .set(SCHEDULES.MAX_ATTEMPTS, DSL.excluded(SCHEDULES.MAX_ATTEMPTS))
                    .set(SCHEDULES.SHARD, DSL.excluded(SCHEDULES.SHARD))
                    .set(SCHEDULES.ORDERING_KEY, DSL.excluded(SCHEDULES.ORDERING_KEY))
                    .set(SCHEDULES.CONCURRENCY_KEY, DSL.excluded(SCHEDULES.CONCURRENCY_KEY))
                    .set(SCHEDULES.MISFIRE, DSL.excluded(SCHEDULES.MISFIRE))
                    .set(
                            SCHEDULES.NEXT_RUN_AT,
                            DSL.when(sameTrigger, SCHEDULES.NEXT_RUN_AT).otherwise(DSL.excluded(SCHEDULES.NEXT_RUN_AT)))
                    .set(SCHEDULES.UPDATED_AT, DSL.currentOffsetDateTime())
                    .where(changed)
                    .returning()
                    .fetchOptional();
            SchedulesRecord row = written.isPresent()
                    ? written.get()
                    : ctx.selectFrom(SCHEDULES)
                            .where(SCHEDULES.NAME.eq(schedule.name()))
                            .fetchSingle();
            return ScheduleRows.registered(row);
        });
    }

    /**
     * Stops ticks from enqueueing the schedule's occurrences, in the caller's transaction.
     * Occurrences while paused are not run later: see {@link #resume}.
     *
     * @param tx the caller's transaction (or an auto-commit context)
     * @param name the schedule's name
     * @return false when there is no schedule of that name
     * @throws IllegalArgumentException when {@code name} holds U+0000 or an unpaired surrogate (no
     *     schedule can have such a name); nothing is sent
     */
    public boolean pause(DSLContext tx, String name) {
        DSLContext ctx = schema.on(tx);
        Texts.requireStorable("name", name);
        return Errors.translating(() -> ctx.update(SCHEDULES)
                                .set(SCHEDULES.PAUSED, true)
                                .set(SCHEDULES.UPDATED_AT, DSL.currentOffsetDateTime())
                                .where(SCHEDULES.NAME.eq(name).and(SCHEDULES.PAUSED.isFalse()))
                                .execute()
                        == 1
                || ctx.fetchExists(SCHEDULES, SCHEDULES.NAME.eq(name)));
    }

    /**
     * Lets ticks enqueue a paused schedule's occurrences again, from the first occurrence
     * strictly after now: occurrences during the pause are not enqueued, whatever the misfire
     * policy. A schedule that is not paused is left as it is. In the caller's transaction.
     *
     * @param tx the caller's transaction (or an auto-commit context)
     * @param name the schedule's name
     * @return false when there is no schedule of that name
     * @throws IllegalArgumentException when {@code name} holds U+0000 or an unpaired surrogate (no
     *     schedule can have such a name); nothing is sent
     */
    public boolean resume(DSLContext tx, String name) {
        DSLContext ctx = schema.on(tx);
        Texts.requireStorable("name", name);
        return Errors.translating(() -> {
            // Read, compute the next occurrence in Java, then write only if the trigger is still
            // the one read: a registration in between makes this read again.
            for (int attempt = 0; attempt < 10; attempt++) {
                Optional<SchedulesRecord> found =
                        ctx.selectFrom(SCHEDULES).where(SCHEDULES.NAME.eq(name)).fetchOptional();
                if (found.isEmpty()) {
                    return false;
                }
                SchedulesRecord row = found.get();
                if (!row.getPaused()) {
                    return true;
                }
                Instant now = now(ctx);
                Instant next = ScheduleRows.schedule(row).trigger().after(now).orElse(now);
                int updated = ctx.update(SCHEDULES)
                        .set(SCHEDULES.PAUSED, false)
                        .set(SCHEDULES.NEXT_RUN_AT, ScheduleRows.at(next))
                        .set(SCHEDULES.UPDATED_AT, DSL.currentOffsetDateTime())
                        .where(SCHEDULES.NAME.eq(name))
                        .and(SCHEDULES.PAUSED.isTrue())
                        .and(SCHEDULES.CRON.isNotDistinctFrom(row.getCron()))
                        .and(SCHEDULES.ZONE.isNotDistinctFrom(row.getZone()))
                        .and(SCHEDULES.INTERVAL_MS.isNotDistinctFrom(row.getIntervalMs()))
                        .execute();
                if (updated == 1) {
                    return true;
                }
            }
            throw new IllegalStateException("schedule " + name + " kept changing while resuming it");
        });
    }

    /**
     * Deletes the schedule, in the caller's transaction. Jobs it already enqueued stay in the
     * queue. While a tick holds the row, this waits for it.
     *
     * @param tx the caller's transaction (or an auto-commit context)
     * @param name the schedule's name
     * @return false when there was no schedule of that name
     * @throws IllegalArgumentException when {@code name} holds U+0000 or an unpaired surrogate (no
     *     schedule can have such a name); nothing is sent
     */
    public boolean remove(DSLContext tx, String name) {
        DSLContext ctx = schema.on(tx);
        Texts.requireStorable("name", name);
        return Errors.translating(
                () -> ctx.deleteFrom(SCHEDULES).where(SCHEDULES.NAME.eq(name)).execute() == 1);
    }

    /**
     * Reads one schedule without locking it; never waits.
     *
     * @param tx the transaction (or auto-commit context) to read in
     * @param name the schedule's name
     * @return the schedule with its next occurrence; empty when there is none of that name
     * @throws IllegalStateException when the stored row cannot be read as a schedule (a time zone
     *     this JVM does not know)
     * @throws IllegalArgumentException when {@code name} holds U+0000 or an unpaired surrogate (no
     *     schedule can have such a name); nothing is sent
     */
    public Optional<RegisteredSchedule> find(DSLContext tx, String name) {
        DSLContext ctx = schema.on(tx);
        Texts.requireStorable("name", name);
        return Errors.translating(() -> ctx.selectFrom(SCHEDULES)
                .where(SCHEDULES.NAME.eq(name))
                .fetchOptional()
                .map(ScheduleRows::registered));
    }

    /**
     * Reads every schedule without locking; never waits.
     *
     * @param tx the transaction (or auto-commit context) to read in
     * @return the schedules ordered by name
     * @throws IllegalStateException when a stored row cannot be read as a schedule
     */
    public List<RegisteredSchedule> list(DSLContext tx) {
        DSLContext ctx = schema.on(tx);
        return Errors.translating(() -> ctx.selectFrom(SCHEDULES).orderBy(SCHEDULES.NAME).fetch().stream()
                .map(ScheduleRows::registered)
                .toList());
    }

    // ------------------------------------------------------------------ ticks

    /**
     * One tick at the configured clock's time (the database's by default): enqueues the due
     * occurrences of every due, unpaused schedule (see the class description). When nothing is
     * due, one statement; otherwise one transaction per {@link SchedulesConfig#batchSize()} due
     * schedules, each locking its rows with {@code FOR UPDATE SKIP LOCKED} (never waiting for
     * another scheduler) until it commits. Safe to run from many threads and JVMs at once.
     *
     * @return how many jobs this tick enqueued, one per occurrence
     */
    public int runDue() {
        return ticker.tick(config.clock().map(Clock::instant).orElse(null));
    }

    /**
     * {@link #runDue()} at {@code now} instead of the configured clock's time: for tests that
     * move time on, and for callers that schedule ticks themselves.
     *
     * @param now the time of this tick
     * @return how many jobs this tick enqueued, one per occurrence
     */
    public int runDue(Instant now) {
        return ticker.tick(Objects.requireNonNull(now, "now"));
    }

    private Instant now(DSLContext ctx) {
        Optional<Clock> clock = config.clock();
        if (clock.isPresent()) {
            return clock.get().instant();
        }
        return ctx.select(DSL.currentOffsetDateTime()).fetchSingle().value1().toInstant();
    }
}

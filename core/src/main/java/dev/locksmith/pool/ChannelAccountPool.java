package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;

import dev.locksmith.Backoff;
import dev.locksmith.Locksmith;
import dev.locksmith.codegen.tables.records.ChannelAccountsRecord;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.internal.Binds;
import dev.locksmith.internal.Distribution;
import dev.locksmith.internal.Durations;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.Observing;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.internal.Sleeper;
import dev.locksmith.internal.Texts;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.InsertValuesStep2;
import org.jooq.impl.DSL;

/**
 * A pool of channel accounts that concurrent callers lease one at a time: a request handler
 * {@linkplain #acquire acquires} an idle account as the source of a transaction it is about to
 * submit, and {@linkplain #release releases} it in the same database transaction that records
 * the outcome, so the release commits (or rolls back) atomically with the ledger.
 *
 * <p>Leases are rows, not held locks: {@code locked_by}, {@code locked_at} and
 * {@code locked_until = now() + lease} (database clock). An account whose lease has expired is
 * acquirable again; its former holder's release or extension is then refused with
 * {@link LeaseNotHeldException}. Acquisition never waits: rows that concurrent acquirers are
 * taking are skipped ({@code SKIP LOCKED}), and an exhausted pool returns
 * {@link Optional#empty()} at once. See {@link AcquireStrategy} for how the account is chosen.
 *
 * <p>Thread-safe; share one instance.
 *
 * <p>The hot statements are rendered once, at construction, with the settings of the
 * {@code DSLContext} given here, and run on the connection of the {@code DSLContext} passed to
 * each call, through its jOOQ configuration (so its {@code ExecuteListener}s see them), or
 * straight through JDBC when the {@code DSLContext} given here says
 * {@link dev.locksmith.ExecutionMode#RAW_JDBC} (docs/operations.md, "Execution modes").
 *
 * <p><b>Citus.</b> Where Citus distributes the table by {@code bucket} (the schema's Citus
 * layout), {@link #register} puts each key in the bucket its md5 falls in, every statement on
 * one account names that bucket, and {@link #acquire} tries one bucket at a time from a random
 * one (one single-shard statement each) until one has an acquirable account. Whether the table
 * is distributed is looked up once per instance, on the first call that needs to know.
 */
public final class ChannelAccountPool {

    private static final Backoff WAIT_BACKOFF = new Backoff(Duration.ofMillis(1), Duration.ofMillis(25), 2.0, 0.5);

    private final DSLContext dsl;
    private final SchemaMapping schema;
    private final AcquireStrategy strategy;
    private final DoubleSupplier random;
    private final Sleeper sleeper;
    private final Distribution.PerLayout<PoolStatements> statements;

    private final Distribution distribution;
    private final Observing observing;

    /**
     * A pool in {@code locksmith}'s environment with the default settings.
     *
     * @param locksmith the environment: schema, execution mode, observer
     */
    public ChannelAccountPool(Locksmith locksmith) {
        this(locksmith.dsl());
    }

    /**
     * A pool in {@code locksmith}'s environment with other settings.
     *
     * @param locksmith the environment: schema, execution mode, observer
     * @param config the pool's settings
     */
    public ChannelAccountPool(Locksmith locksmith, ChannelAccountPoolConfig config) {
        this(locksmith.dsl(), config);
    }

    /**
     * A pool on {@code dsl} with the constant-cost, evenly spreading
     * {@link AcquireStrategy#RANDOM_PROBES}.
     *
     * @param dsl whose settings (schema mapping, dialect) the statements are rendered with
     */
    public ChannelAccountPool(DSLContext dsl) {
        this(dsl, ChannelAccountPoolConfig.defaults());
    }

    /**
     * A pool on {@code dsl} with other settings.
     *
     * @param dsl whose settings (schema mapping, dialect) the statements are rendered with
     * @param config the settings
     */
    public ChannelAccountPool(DSLContext dsl, ChannelAccountPoolConfig config) {
        this(dsl, config, () -> ThreadLocalRandom.current().nextDouble(), Sleeper.THREAD_SLEEP);
    }

    /**
     * For tests: {@code random} supplies the uniform [0, 1) values of
     * {@link AcquireStrategy#RANDOM_PROBES} and {@link AcquireStrategy#RANDOM_START} (a seeded
     * source makes the probes repeatable), and {@code sleeper} pauses between attempts of a
     * bounded-wait acquire.
     */
    ChannelAccountPool(DSLContext dsl, ChannelAccountPoolConfig config, DoubleSupplier random, Sleeper sleeper) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
        this.strategy = Objects.requireNonNull(config, "config").strategy();
        this.random = Objects.requireNonNull(random, "random");
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
        this.distribution = new Distribution(dsl, CHANNEL_ACCOUNTS, CHANNEL_ACCOUNTS.BUCKET.getName());
        this.statements = distribution.perLayout(
                new PoolStatements(dsl, strategy, false), () -> new PoolStatements(dsl, strategy, true));
        this.schema = SchemaMapping.of(dsl);
        this.observing = Observing.of(dsl);
    }

    // ------------------------------------------------------------------ membership

    /**
     * Adds accounts (idle) with one multi-row insert in the caller's transaction; keys already
     * registered are left as they are ({@code ON CONFLICT DO NOTHING}). Takes no lock another
     * caller waits on, except that two transactions registering the same new key wait for each
     * other until the first ends.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param publicKeys the keys, each 1 to 128 characters and not blank; duplicates count once;
     *     empty sends nothing
     * @return how many were new
     * @throws IllegalArgumentException for an invalid key, before anything is inserted
     */
    public int register(DSLContext tx, Collection<String> publicKeys) {
        DSLContext ctx = schema.on(tx);
        Set<String> keys = validKeys(publicKeys);
        if (keys.isEmpty()) {
            return 0;
        }
        int buckets = distribution.shards(ctx);
        return Errors.translating(() -> {
            InsertValuesStep2<ChannelAccountsRecord, String, Integer> insert =
                    ctx.insertInto(CHANNEL_ACCOUNTS, CHANNEL_ACCOUNTS.PUBLIC_KEY, CHANNEL_ACCOUNTS.BUCKET);
            for (String key : keys) {
                insert = insert.values(key, bucketOf(key, buckets));
            }
            return insert.onConflictDoNothing().execute();
        });
    }

    /**
     * Removes accounts that are not under an unexpired lease, in the caller's transaction;
     * leased ones stay (their holders still use them) and can be removed once released. The
     * deleted rows are locked until the caller's transaction ends; an account another caller is
     * acquiring at that moment is waited for.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param publicKeys the keys, each 1 to 128 characters and not blank; unknown keys are
     *     ignored; empty sends nothing
     * @return how many were removed
     * @throws IllegalArgumentException for an invalid key, before anything is deleted
     */
    public int remove(DSLContext tx, Collection<String> publicKeys) {
        DSLContext ctx = schema.on(tx);
        Set<String> keys = validKeys(publicKeys);
        if (keys.isEmpty()) {
            return 0;
        }
        return Errors.translating(() -> ctx.deleteFrom(CHANNEL_ACCOUNTS)
                .where(CHANNEL_ACCOUNTS.PUBLIC_KEY.in(keys))
                .and(acquirable())
                .execute());
    }

    /**
     * Reads an account's lease without locking it; never waits.
     *
     * @param tx the transaction (or auto-commit context) to read in
     * @param publicKey the account's key
     * @return the account with its lease as of {@code tx}'s snapshot; empty when not registered
     */
    public Optional<ChannelAccount> find(DSLContext tx, String publicKey) {
        DSLContext ctx = schema.on(tx);
        String key = validKey(publicKey);
        Condition inBucket = inBucketOf(ctx, key);
        return Errors.translating(() -> ctx.selectFrom(CHANNEL_ACCOUNTS)
                .where(CHANNEL_ACCOUNTS.PUBLIC_KEY.eq(key))
                .and(inBucket)
                .fetchOptional()
                .map(ChannelAccount::from));
    }

    /**
     * Counts by state, in one scan of the table on the pool's own {@code DSLContext}; takes no
     * lock. Meant for metrics: on a large pool, do not call it per request.
     *
     * @return the counts at the statement's start (database clock)
     */
    public PoolStats stats() {
        Field<OffsetDateTime> now = DSL.currentOffsetDateTime();
        return Errors.translating(() -> {
            var r = dsl.select(
                            DSL.count(),
                            DSL.count().filterWhere(CHANNEL_ACCOUNTS.LOCKED_UNTIL.isNull()),
                            DSL.count().filterWhere(CHANNEL_ACCOUNTS.LOCKED_UNTIL.ge(now)),
                            DSL.count().filterWhere(CHANNEL_ACCOUNTS.LOCKED_UNTIL.lt(now)))
                    .from(CHANNEL_ACCOUNTS)
                    .fetchSingle();
            return new PoolStats(r.value1(), r.value2(), r.value3(), r.value4());
        });
    }

    // ------------------------------------------------------------------ acquire

    /**
     * Leases an idle account (never leased, released, or with an expired lease) to
     * {@code owner} for {@code lease}, in one auto-committed statement.
     *
     * @param lease how long; positive, at most {@link Durations#MAX} (100 years)
     * @param owner who holds it, 1 to 128 characters; use something unique per acquisition
     *     (a request id), because release checks it
     * @return the leased account, or empty at once when none is idle (rows other acquirers are
     *     locking at that moment count as taken)
     * @throws IllegalArgumentException for a lease out of range or an invalid owner
     */
    public Optional<ChannelAccount> acquire(Duration lease, String owner) {
        requireLease(lease);
        String holder = validOwner(owner);
        if (!observing.enabled()) {
            return acquireOnce(lease, holder);
        }
        return observing.observe(
                () -> new Operation.AcquireAccount(false),
                () -> acquireOnce(lease, holder),
                a -> a.isPresent() ? Outcome.OK : Outcome.EMPTY);
    }

    private Optional<ChannelAccount> acquireOnce(Duration lease, String holder) {
        PoolStatements statements = statements(dsl);
        if (!statements.distributed) {
            return acquireIn(statements, lease, holder, -1);
        }
        // On Citus: one router statement per bucket, from a random one, until a bucket has an
        // idle account; an empty pool costs one statement per bucket
        int buckets = distribution.shards(dsl);
        int first = (int) Math.min(buckets - 1, Math.floor(random.getAsDouble() * buckets));
        for (int i = 0; i < buckets; i++) {
            Optional<ChannelAccount> acquired = acquireIn(statements, lease, holder, (first + i) % buckets);
            if (acquired.isPresent()) {
                return acquired;
            }
        }
        return Optional.empty();
    }

    /** One acquire statement; in {@code bucket} on Citus (else -1). */
    private Optional<ChannelAccount> acquireIn(PoolStatements statements, Duration lease, String holder, int bucket) {
        Binds binds =
                statements.acquire.binds().set(PoolStatements.OWNER, holder).setInterval(PoolStatements.LEASE, lease);
        if (strategy == AcquireStrategy.RANDOM_PROBES) {
            double[] probes = new double[PoolStatements.PROBE_COUNT];
            for (int i = 0; i < probes.length; i++) {
                probes[i] = random.getAsDouble();
            }
            binds.setDoubles(PoolStatements.PROBES, probes);
        }
        if (strategy != AcquireStrategy.ORDER_BY_RANDOM || statements.distributed) {
            binds.set(PoolStatements.START, random.getAsDouble());
        }
        if (bucket >= 0) {
            binds.set(PoolStatements.BUCKET, bucket);
        }
        return statements.acquire.fetchOptional(dsl, binds, PoolStatements::account);
    }

    /**
     * Like {@link #acquire(Duration, String)}, but when the pool is exhausted it tries again with
     * a short backoff (1 ms growing to 25 ms) until an account frees up or {@code maxWait} has
     * passed. Each try is its own auto-committed statement; between tries the calling thread
     * sleeps, holding no connection.
     *
     * @param lease how long; positive, at most {@link Durations#MAX} (100 years)
     * @param owner who holds it, 1 to 128 characters; unique per acquisition
     * @param maxWait how long to keep trying; zero or more (zero tries once)
     * @return the leased account, or empty once {@code maxWait} has passed without one (or at
     *     once when the thread is interrupted, with the interrupt flag kept)
     * @throws IllegalArgumentException for a lease or wait out of range or an invalid owner
     */
    public Optional<ChannelAccount> acquire(Duration lease, String owner, Duration maxWait) {
        requireLease(lease);
        String holder = validOwner(owner);
        Durations.nonNegative("maxWait", maxWait);
        if (!observing.enabled()) {
            return acquireWaiting(lease, holder, maxWait);
        }
        return observing.observe(
                () -> new Operation.AcquireAccount(true),
                () -> acquireWaiting(lease, holder, maxWait),
                a -> a.isPresent() ? Outcome.OK : Outcome.TIMED_OUT);
    }

    private Optional<ChannelAccount> acquireWaiting(Duration lease, String holder, Duration maxWait) {
        long deadline = System.nanoTime() + maxWait.toNanos();
        for (int attempt = 1; ; attempt++) {
            Optional<ChannelAccount> account = acquireOnce(lease, holder);
            long left = deadline - System.nanoTime();
            if (account.isPresent() || left <= 0) {
                return account;
            }
            Duration pause = WAIT_BACKOFF.delay(Math.min(attempt, 16), random.getAsDouble());
            try {
                sleeper.sleep(pause.toNanos() < left ? pause : Duration.ofNanos(left));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }
    }

    // ------------------------------------------------------------------ release and extend

    /**
     * Releases {@code owner}'s lease in the caller's transaction, so the account becomes idle
     * exactly when the caller's writes commit, and stays leased if they roll back. Locks the row
     * until the caller's transaction ends; a concurrent acquirer skips it meanwhile.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param publicKey the account's key
     * @param owner the owner given to {@code acquire}
     * @throws LeaseNotHeldException when {@code owner} does not hold an unexpired lease (never a
     *     silent success)
     * @throws ChannelAccountNotFoundException for an unknown key
     */
    public void release(DSLContext tx, String publicKey, String owner) {
        DSLContext ctx = schema.on(tx);
        String key = validKey(publicKey);
        String holder = validOwner(owner);
        PoolStatements statements = statements(ctx);
        Binds binds = statements.release.binds().set(PoolStatements.KEY, key).set(PoolStatements.OWNER, holder);
        int released = statements.release.execute(ctx, inBucket(statements, binds, ctx, key));
        if (released == 0) {
            throw refusal(ctx, key, holder);
        }
    }

    /**
     * Extends {@code owner}'s unexpired lease to {@code clock_timestamp() + lease}, in the
     * caller's transaction (or auto-committed). Never shortens it: when the lease already runs
     * longer, its expiry stays as it is ({@code greatest(locked_until, clock_timestamp() + lease)}).
     * The clock is read when the statement runs, not when the caller's transaction began
     * ({@code now()}), so an extension late in a long transaction is measured from the moment it
     * is made. Locks the row until the caller's transaction ends.
     *
     * @param tx the caller's transaction (or an auto-commit context)
     * @param publicKey the account's key
     * @param owner the owner given to {@code acquire}
     * @param lease at least this much from now; positive, at most {@link Durations#MAX}
     * @return the expiry now in force (the later of the old and the asked-for one)
     * @throws LeaseNotHeldException when {@code owner} does not hold an unexpired lease
     * @throws ChannelAccountNotFoundException for an unknown key
     */
    public OffsetDateTime extend(DSLContext tx, String publicKey, String owner, Duration lease) {
        DSLContext ctx = schema.on(tx);
        String key = validKey(publicKey);
        String holder = validOwner(owner);
        requireLease(lease);
        PoolStatements statements = statements(ctx);
        Optional<OffsetDateTime> extended = statements.extend.fetchOptional(
                ctx,
                inBucket(
                        statements,
                        statements
                                .extend
                                .binds()
                                .set(PoolStatements.KEY, key)
                                .set(PoolStatements.OWNER, holder)
                                .setInterval(PoolStatements.LEASE, lease),
                        ctx,
                        key),
                row -> row.getObject(CHANNEL_ACCOUNTS.LOCKED_UNTIL.getName(), OffsetDateTime.class));
        return extended.orElseThrow(() -> refusal(ctx, key, holder));
    }

    /**
     * Clears expired leases, so those accounts return to the idle index (acquisition takes
     * expired ones anyway; this keeps the fast path fast). Auto-committed.
     *
     * @return how many leases were cleared
     */
    public int expireLeases() {
        return Errors.translating(() -> dsl.update(CHANNEL_ACCOUNTS)
                .setNull(CHANNEL_ACCOUNTS.LOCKED_BY)
                .setNull(CHANNEL_ACCOUNTS.LOCKED_AT)
                .setNull(CHANNEL_ACCOUNTS.LOCKED_UNTIL)
                .set(CHANNEL_ACCOUNTS.UPDATED_AT, DSL.currentOffsetDateTime())
                .where(CHANNEL_ACCOUNTS.LOCKED_UNTIL.lt(DSL.currentOffsetDateTime()))
                .execute());
    }

    // ------------------------------------------------------------------ Citus

    /** The statements for where the table is: one server's, or Citus's (every statement names one bucket). */
    private PoolStatements statements(DSLContext ctx) {
        return statements.on(ctx);
    }

    /** Binds the bucket of {@code key} where the statements name one (Citus). */
    private Binds inBucket(PoolStatements statements, Binds binds, DSLContext ctx, String key) {
        return statements.distributed
                ? binds.set(PoolStatements.BUCKET, bucketOf(key, distribution.shards(ctx)))
                : binds;
    }

    /** {@code bucket = <key's bucket>} on Citus, so the statement runs on one worker; no condition elsewhere. */
    private Condition inBucketOf(DSLContext ctx, String key) {
        int buckets = distribution.shards(ctx);
        return buckets == 0 ? DSL.noCondition() : CHANNEL_ACCOUNTS.BUCKET.eq(bucketOf(key, buckets));
    }

    /**
     * The bucket of an account: 0 on one server ({@code buckets} 0); on Citus the first 28 bits of
     * the md5 of the key's UTF-8 bytes, modulo the number of buckets. Change set
     * {@code pool-006-citus-distribute-channel-accounts} computes the same in SQL for accounts
     * registered before the table was distributed.
     */
    static int bucketOf(String publicKey, int buckets) {
        if (buckets == 0) {
            return 0;
        }
        byte[] digest;
        try {
            digest = java.security.MessageDigest.getInstance("MD5")
                    .digest(publicKey.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no MD5, which the Citus layout of the pool needs", e);
        }
        int first28 = (digest[0] & 0xff) << 20
                | (digest[1] & 0xff) << 12
                | (digest[2] & 0xff) << 4
                | (digest[3] & 0xff) >>> 4;
        return first28 % buckets;
    }

    // ------------------------------------------------------------------ SQL pieces

    /** Idle: never leased, released, or with an expired lease. */
    static Condition acquirable() {
        return CHANNEL_ACCOUNTS.LOCKED_UNTIL.isNull().or(CHANNEL_ACCOUNTS.LOCKED_UNTIL.lt(DSL.currentOffsetDateTime()));
    }

    /** Why a release or extension matched no row: unknown key, or not the holder. */
    private static LocksmithException refusal(DSLContext tx, String key, String owner) {
        Optional<ChannelAccountsRecord> row = Errors.translating(() -> tx.selectFrom(CHANNEL_ACCOUNTS)
                .where(CHANNEL_ACCOUNTS.PUBLIC_KEY.eq(key))
                .fetchOptional());
        if (row.isEmpty()) {
            return new ChannelAccountNotFoundException(key);
        }
        return new LeaseNotHeldException(key, owner, row.get().getLockedBy());
    }

    private static void requireLease(Duration lease) {
        Durations.positive("lease", lease);
    }

    private static String validKey(String publicKey) {
        Objects.requireNonNull(publicKey, "publicKey");
        if (publicKey.isBlank() || publicKey.length() > 128) {
            throw new IllegalArgumentException(
                    "publicKey must be 1 to 128 characters and not blank, was '" + publicKey + "'");
        }
        return Texts.requireStorable("publicKey", publicKey);
    }

    private static Set<String> validKeys(Collection<String> publicKeys) {
        Objects.requireNonNull(publicKeys, "publicKeys");
        Set<String> keys = new LinkedHashSet<>();
        for (String key : publicKeys) {
            keys.add(validKey(key));
        }
        return keys;
    }

    private static String validOwner(String owner) {
        Objects.requireNonNull(owner, "owner");
        if (owner.isBlank() || owner.length() > 128) {
            throw new IllegalArgumentException("owner must be 1 to 128 characters and not blank");
        }
        return Texts.requireStorable("owner", owner);
    }
}

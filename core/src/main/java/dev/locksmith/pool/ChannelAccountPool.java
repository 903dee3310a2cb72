package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;

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
import java.sql.Connection;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.InsertValuesStep2;
import org.jooq.impl.DSL;

/**
 * A pool of channel accounts that concurrent callers lease one at a time: a request handler
 * {@linkplain #acquire acquires} an idle account as the source of a transaction it is about to
 * submit, and {@linkplain #release releases} it in the same database transaction that records
 * the outcome, so the release commits (or rolls back) atomically with the ledger.
 *
 * <p>Leases are rows, not held locks: a row of {@code channel_account_leases} with
 * {@code locked_by}, {@code locked_at}, {@code locked_until = now() + lease} (database clock) and
 * a {@linkplain ChannelAccount#fence() fence}, inserted by the acquisition and ended by the
 * release; the account's own row is only locked, never updated, so that a long transaction
 * elsewhere (which keeps VACUUM from removing old row versions) does not slow acquisitions down
 * (docs/pool.md, "Leases and the MVCC horizon"). An account whose lease has expired is
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

    /** How many times a release or extension runs its statement on a lease that may have moved. */
    private static final int MOVED_LOOKS = 3;

    private static final Backoff WAIT_BACKOFF = new Backoff(Duration.ofMillis(1), Duration.ofMillis(25), 2.0, 0.5);

    private final DSLContext dsl;
    private final SchemaMapping schema;
    private final AcquireStrategy strategy;
    private final DoubleSupplier random;
    private final Sleeper sleeper;
    private final Distribution.PerLayout<PoolStatements> statements;

    private final Distribution distribution;
    private final Observing observing;
    private final Acquisition acquisition;

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
        this.acquisition = new Acquisition(dsl, strategy, random, distribution, statements);
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
     * Removes accounts that are not under an unexpired lease, in the caller's transaction (in one
     * of its own when {@code tx} is in auto-commit mode); leased ones stay (their holders still use
     * them) and can be removed once released. Locks the accounts first, waiting for an
     * acquisition in progress, then deletes those without a live lease, as seen after the locks
     * (see {@link PoolStatements} for why the look follows the lock), and their expired leases; the
     * deleted rows stay locked until the transaction ends.
     *
     * @param tx the caller's transaction; the change commits or rolls back with it
     * @param publicKeys the keys, each 1 to 128 characters and not blank; unknown keys are
     *     ignored; empty sends nothing
     * @return how many were removed
     * @throws IllegalArgumentException for an invalid key, before anything is deleted
     * @throws IllegalStateException when {@code tx} is a REPEATABLE READ or SERIALIZABLE
     *     transaction: its snapshot predates the locks, so it could miss a lease taken meanwhile
     *     (by an acquisition in READ COMMITTED, which SERIALIZABLE's checks do not see) and remove a
     *     leased account
     */
    public int remove(DSLContext tx, Collection<String> publicKeys) {
        DSLContext ctx = schema.on(tx);
        Set<String> keys = validKeys(publicKeys);
        if (keys.isEmpty()) {
            return 0;
        }
        return inTransaction(ctx, c -> removeLocked(c, keys));
    }

    /**
     * Runs {@code body} in the caller's transaction, or in one of its own when {@code ctx} is in
     * auto-commit mode (a body of several statements that rely on a lock taken by the first).
     */
    private static <T> T inTransaction(DSLContext ctx, java.util.function.Function<DSLContext, T> body) {
        boolean autoCommit = Errors.translating(() -> ctx.connectionResult(Connection::getAutoCommit));
        if (autoCommit) {
            return Errors.translating(() -> ctx.transactionResult(c -> body.apply(c.dsl())));
        }
        return body.apply(ctx);
    }

    private int removeLocked(DSLContext ctx, Set<String> keys) {
        String isolation = Errors.translating(
                () -> ctx.fetchValue(DSL.field("current_setting('transaction_isolation')", String.class)));
        if (!"read committed".equals(isolation)) {
            throw new IllegalStateException("ChannelAccountPool.remove needs a READ COMMITTED transaction, not "
                    + isolation + ": in any other the look for a live lease after the accounts' locks reuses the"
                    + " transaction's snapshot, and could miss a lease taken meanwhile");
        }
        int buckets = distribution.shards(ctx);
        Map<Integer, List<String>> byBucket = new LinkedHashMap<>();
        for (String key : keys) {
            byBucket.computeIfAbsent(bucketOf(key, buckets), b -> new java.util.ArrayList<>())
                    .add(key);
        }
        int removed = 0;
        for (Map.Entry<Integer, List<String>> group : byBucket.entrySet()) {
            Condition these = CHANNEL_ACCOUNTS
                    .PUBLIC_KEY
                    .in(group.getValue())
                    .and(buckets == 0 ? DSL.noCondition() : CHANNEL_ACCOUNTS.BUCKET.eq(group.getKey()));
            removed += Errors.translating(() -> {
                ctx.select(CHANNEL_ACCOUNTS.PUBLIC_KEY)
                        .from(CHANNEL_ACCOUNTS)
                        .where(these)
                        .orderBy(CHANNEL_ACCOUNTS.PUBLIC_KEY)
                        .forUpdate()
                        .execute();
                List<String> gone = ctx.deleteFrom(CHANNEL_ACCOUNTS)
                        .where(these)
                        .and(PoolStatements.unleased(buckets == 0 ? CHANNEL_ACCOUNTS.BUCKET : DSL.val(group.getKey())))
                        .returning(CHANNEL_ACCOUNTS.PUBLIC_KEY)
                        .fetch(CHANNEL_ACCOUNTS.PUBLIC_KEY);
                if (!gone.isEmpty()) {
                    // their expired leases, if any: no longer anyone's
                    ctx.deleteFrom(CHANNEL_ACCOUNT_LEASES)
                            .where(CHANNEL_ACCOUNT_LEASES.PUBLIC_KEY.in(gone))
                            .and(buckets == 0 ? DSL.noCondition() : CHANNEL_ACCOUNT_LEASES.BUCKET.eq(group.getKey()))
                            .execute();
                }
                return gone.size();
            });
        }
        return removed;
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
        return PoolReads.find(ctx, key, inBucketOf(ctx, key));
    }

    /**
     * Counts by state, in one scan of the table on the pool's own {@code DSLContext}; takes no
     * lock. Meant for metrics: on a large pool, do not call it per request.
     *
     * @return the counts at the statement's start (database clock)
     */
    public PoolStats stats() {
        return PoolReads.stats(dsl);
    }

    // ------------------------------------------------------------------ acquire

    /**
     * Leases an idle account (never leased, released, or with an expired lease) to
     * {@code owner} for {@code lease}, in one statement on the pool's {@code DSLContext}
     * (auto-committed, or in the transaction that context is in): the account locked, then its
     * lease inserted unless a look with a snapshot taken after the lock finds a live one; on
     * Citus a transaction of its own of three statements.
     *
     * @param lease how long; positive, at most {@link Durations#MAX} (100 years)
     * @param owner who holds it, 1 to 128 characters; use something unique per acquisition
     *     (a request id), because release checks it
     * @return the leased account, or empty at once when none is idle (rows other acquirers are
     *     locking at that moment count as taken)
     * @throws IllegalArgumentException for a lease out of range or an invalid owner
     * @throws IllegalStateException when the pool's {@code DSLContext} joins a REPEATABLE READ
     *     transaction (a Spring-managed one, say), whose snapshot the look for a live lease after
     *     the account's lock would reuse
     */
    public Optional<ChannelAccount> acquire(Duration lease, String owner) {
        requireLease(lease);
        String holder = validOwner(owner);
        if (!observing.enabled()) {
            return acquisition.once(lease, holder);
        }
        return observing.observe(
                () -> new Operation.AcquireAccount(false),
                () -> acquisition.once(lease, holder),
                a -> a.isPresent() ? Outcome.OK : Outcome.EMPTY);
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
     * @throws IllegalStateException when the pool's {@code DSLContext} joins a REPEATABLE READ
     *     transaction, as for {@link #acquire(Duration, String)}
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
            Optional<ChannelAccount> account = acquisition.once(lease, holder);
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
        Binds binds = inBucket(
                statements,
                statements.release.binds().set(PoolStatements.KEY, key).set(PoolStatements.OWNER, holder),
                ctx,
                key);
        int released =
                lookingAgain(ctx, statements, key, holder, () -> statements.release.execute(ctx, binds), n -> n > 0);
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
     * is made. Locks the account's row ({@code FOR KEY SHARE}: an acquirer passes it over
     * meanwhile, and one that holds it already is waited for, after which an expired lease stays
     * expired) and the lease's row until the caller's transaction ends; in a transaction of its own
     * when {@code tx} is in auto-commit mode.
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
        return inTransaction(ctx, c -> extendLocked(c, key, holder, lease));
    }

    /** {@link #extend} in a transaction: the account locked, then the lease's expiry moved. */
    private OffsetDateTime extendLocked(DSLContext ctx, String key, String holder, Duration lease) {
        PoolStatements statements = statements(ctx);
        statements.lockAccount.fetch(
                ctx,
                inBucket(statements, statements.lockAccount.binds().set(PoolStatements.KEY, key), ctx, key),
                row -> 1);
        Binds binds = inBucket(
                statements,
                statements
                        .extend
                        .binds()
                        .set(PoolStatements.KEY, key)
                        .set(PoolStatements.OWNER, holder)
                        .setInterval(PoolStatements.LEASE, lease),
                ctx,
                key);
        Optional<OffsetDateTime> extended = lookingAgain(
                ctx,
                statements,
                key,
                holder,
                () -> statements.extend.fetchOptional(
                        ctx,
                        binds,
                        row -> row.getObject(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL.getName(), OffsetDateTime.class)),
                Optional::isPresent);
        return extended.orElseThrow(() -> refusal(ctx, key, holder));
    }

    /**
     * Deletes expired leases, so that {@link #find} and {@link #stats()} show their accounts idle.
     * Optional: acquisition takes an account whose lease has expired anyway, and the turn of the
     * lease table's generations drops expired leases on its own. Auto-committed.
     *
     * @return how many leases were deleted
     */
    public int expireLeases() {
        return Errors.translating(() -> dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES)
                .where(CHANNEL_ACCOUNT_LEASES.RELEASED_AT.isNull())
                .and(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL.lt(DSL.currentOffsetDateTime()))
                .execute());
    }

    /**
     * Runs {@code statement} on {@code owner}'s lease again, as a new statement, while it did not
     * find the lease and a live lease of {@code owner} is there: the turn of the lease generations
     * moves a lease held across turns by a DELETE and an INSERT, and a statement that waited for
     * the row meanwhile finds it deleted and the new one outside its snapshot. A new statement
     * (READ COMMITTED: a new snapshot) sees the new row; under REPEATABLE READ the wait ends in a
     * serialization failure instead, for the caller to retry, and a lease moved and its old slot
     * truncated after the caller's snapshot was taken is not found at all (TRUNCATE is not MVCC-safe):
     * refused with LeaseNotHeldException, it runs out by itself. A lease moves at most once per
     * turn, so a few looks are enough.
     */
    private <T> T lookingAgain(
            DSLContext ctx,
            PoolStatements statements,
            String key,
            String owner,
            Supplier<T> statement,
            Predicate<T> found) {
        T result = statement.get();
        for (int look = 1; look < MOVED_LOOKS && !found.test(result) && held(ctx, statements, key, owner); look++) {
            result = statement.get();
        }
        return result;
    }

    private boolean held(DSLContext ctx, PoolStatements statements, String key, String owner) {
        Binds binds = inBucket(
                statements,
                statements.held.binds().set(PoolStatements.KEY, key).set(PoolStatements.OWNER, owner),
                ctx,
                key);
        return statements.held.fetchOptional(ctx, binds, row -> true).isPresent();
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

    /** Why a release or extension matched no row: unknown key, or not the holder. */
    private LocksmithException refusal(DSLContext tx, String key, String owner) {
        Optional<ChannelAccount> account = find(tx, key);
        if (account.isEmpty()) {
            return new ChannelAccountNotFoundException(key);
        }
        return new LeaseNotHeldException(key, owner, account.get().lockedBy());
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

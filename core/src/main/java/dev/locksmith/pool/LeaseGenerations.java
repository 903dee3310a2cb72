package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;

import dev.locksmith.internal.Errors;
import dev.locksmith.internal.RotatingPartitions;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Name;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * The lease table's generations (changelog {@code pool-008-channel-account-leases}): leases are
 * inserted into the current slot of {@code channel_account_leases} and ended by their release (the
 * row stays as the account's last use), so a slot that is no longer current holds no live lease
 * once its leases have ended, and is then emptied by {@code TRUNCATE} ({@link RotatingPartitions}),
 * which, unlike VACUUM, no snapshot holds back; its ended and expired leases go with it. The
 * generation moves on once the current slot's partition reaches {@link #FULL_BYTES}; when no slot
 * ahead is empty, the oldest slot's live leases (a lease held across several turns) move into the
 * current slot, fence and all, so that one long lease never stops the rotation. A release or
 * extension that meets a lease being moved looks again ({@link ChannelAccountPool}).
 *
 * <p>Turned by the pool's own acquisitions: at most once per {@link #LOOK_EVERY} per pool, the
 * acquisition that comes due runs one {@link #step()} after its own statement has committed (a
 * statement reading the sizes; a TRUNCATE waits at most {@link RotatingPartitions#LOCK_WAIT} for
 * its lock). Nothing on Citus's layout, where the shards' sizes are not the coordinator's to read,
 * and nothing for a role that may not truncate the partitions (said once at WARN).
 */
final class LeaseGenerations {

    private static final Logger LOG = System.getLogger(ChannelAccountPool.class.getName());

    /**
     * The current slot is full from this size on: about 2,000 leases (a released lease's row
     * stays, ended, and its release leaves a dead version). While something holds the MVCC horizon
     * back, every acquisition's look for an account's live lease steps over the dead ones of its
     * account in the slots not yet truncated, so the slots are kept small; with or without a held
     * horizon the generation moves about every 2,000 leases.
     */
    static final long FULL_BYTES = 256L << 10;

    /**
     * A slot is analyzed once it holds at least this much and twice the pages the catalog last
     * recorded for it ({@link #analyzeStale}).
     */
    static final long ANALYZE_BYTES = 64L << 10;

    /** How often a pool looks at its generations: one statement a second at most. */
    static final Duration LOOK_EVERY = Duration.ofSeconds(1);

    /**
     * Where the slots are not turned, a lease that ended or ran out this long ago is deleted
     * ({@link #prune()}); until then it records its account's last use for the pick.
     */
    static final Duration PRUNE_AFTER = Duration.ofMinutes(1);

    /** The most leases moved or dropped out of the oldest slot at a time. */
    static final int MOVE_BATCH = 1_000;

    /** Key of the advisory lock that serializes moving the generation: the bytes of "lsmpool" as a number. */
    private static final long LOCK_KEY = 0x6c736d706f6f6cL;

    private final DSLContext dsl;
    private final RotatingPartitions partitions;
    private final AtomicLong lookedAt = new AtomicLong();
    private final AtomicBoolean warned = new AtomicBoolean();
    /** Each slot's pages when this pool last analyzed it (0: not since the slot was last emptied). */
    private final java.util.concurrent.atomic.AtomicLongArray triedAt =
            new java.util.concurrent.atomic.AtomicLongArray(RotatingPartitions.SLOTS);

    private volatile @Nullable Boolean mayTurn;

    /**
     * What one step did.
     *
     * @param generation the current generation after the step
     * @param truncated slots emptied by TRUNCATE
     * @param moved live leases moved out of the oldest slot
     * @param advanced whether the generation moved
     * @param analyzed slots analyzed ({@link #analyzeStale})
     */
    record Step(long generation, int truncated, int moved, boolean advanced, int analyzed) {
        static final Step NONE = new Step(0, 0, 0, false, 0);
    }

    LeaseGenerations(DSLContext dsl) {
        this.dsl = dsl;
        this.partitions =
                new RotatingPartitions(dsl, CHANNEL_ACCOUNT_LEASES, "channel_account_lease_generation", LOCK_KEY);
    }

    /**
     * Runs {@link #step()} (on Citus, {@link #prune()}) if this pool has not looked for
     * {@link #LOOK_EVERY}, in the calling thread, unless the pool's {@code DSLContext} is inside a
     * caller's transaction (the turn's statements would run in it); a failure is logged, never
     * thrown (the caller's acquisition has succeeded already).
     *
     * @param distributed whether the lease table is Citus's (not turned: pruned)
     */
    void stepIfDue(boolean distributed) {
        long now = System.nanoTime();
        long last = lookedAt.get();
        if ((last != 0 && now - last < LOOK_EVERY.toNanos()) || !lookedAt.compareAndSet(last, now == 0 ? 1 : now)) {
            return;
        }
        try {
            if (!Errors.translating(() -> dsl.connectionResult(java.sql.Connection::getAutoCommit))) {
                return;
            }
            if (distributed) {
                prune();
            } else {
                step();
            }
        } catch (RuntimeException e) {
            LOG.log(
                    Level.WARNING,
                    "locksmith: turning the pool's lease generations failed; tried again in " + LOOK_EVERY.toSeconds()
                            + " s",
                    e);
        }
    }

    /**
     * One round: empties the slots it can, then moves the generation on, or makes room for it to
     * move, once the current slot is full. Runs in transactions of its own on the pool's
     * {@code DSLContext}.
     *
     * @return what it did
     */
    Step step() {
        String schema = partitions.schema();
        if (schema == null || !mayTurn()) {
            prune();
            return Step.NONE;
        }
        RotatingPartitions.State state = partitions.state(dsl, schema);
        int truncated = partitions.truncateEmpty(schema, state, live());
        int analyzed = analyzeStale(schema, state);
        if (state.currentBytes() < FULL_BYTES) {
            return new Step(state.generation(), truncated, 0, false, analyzed);
        }
        RotatingPartitions.Advance advance = partitions.advance(schema, state, LeaseGenerations::makeRoom);
        return new Step(advance.generation(), truncated, advance.moved(), advance.advanced(), analyzed);
    }

    /**
     * Analyzes each slot that holds {@link #ANALYZE_BYTES} or more and has grown to twice the pages
     * the catalog last recorded for it. The acquisitions' look for an account's live lease is an
     * index probe of every slot, planned once per connection (server-side prepared statements):
     * planned while a slot was small, it reads that slot whole, and keeps doing so as the slot
     * grows, until something makes the sessions plan again; an ANALYZE does (and gives the planner
     * the slot's size), where autovacuum may be slow to, or off. {@code SKIP_LOCKED}: a slot
     * another VACUUM or ANALYZE holds is left to it.
     */
    private int analyzeStale(String schema, RotatingPartitions.State state) {
        int analyzed = 0;
        for (int slot = 0; slot < RotatingPartitions.SLOTS; slot++) {
            long bytes = state.bytes().get(slot);
            long pages = bytes / 8192;
            // against the larger of the catalog's count and the size at this pool's last try, so
            // that a role the server does not let analyze (it needs ownership, or MAINTAIN from 17)
            // tries once per doubling, not every second
            if (pages < triedAt.get(slot)) {
                triedAt.set(slot, 0); // emptied since
            }
            long known = Math.max(state.catalogPages().get(slot), triedAt.get(slot));
            if (bytes >= ANALYZE_BYTES && pages > 2L * known) {
                triedAt.set(slot, pages);
                Name partition = partitions.partition(schema, slot);
                Errors.translating(() -> dsl.transactionResult(
                        c -> c.dsl().execute(DSL.query("ANALYZE (SKIP_LOCKED) {0}", DSL.table(partition)))));
                analyzed++;
            }
        }
        return analyzed;
    }

    /**
     * Where the slots are not turned (Citus's layout, or a role that may not truncate them), deletes
     * the leases that ended or ran out more than {@link #PRUNE_AFTER} ago, which nothing else would
     * (a release ends its lease's row, it does not delete it): their row versions are then VACUUM's,
     * as every lease's was before the leases had a table of their own.
     *
     * @return how many were deleted
     */
    int prune() {
        return Errors.translating(() -> dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES)
                .where(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL.lt(DSL.field(
                        "now() - make_interval(secs => {0})",
                        OffsetDateTime.class, DSL.inline(PRUNE_AFTER.toSeconds()))))
                .execute());
    }

    private boolean mayTurn() {
        Boolean known = mayTurn;
        if (known == null) {
            known = partitions.mayTurn();
            mayTurn = known;
            if (!known && warned.compareAndSet(false, true)) {
                LOG.log(
                        Level.WARNING,
                        "locksmith: this role may not TRUNCATE channel_account_leases' partitions or UPDATE the sequence"
                                + " channel_account_lease_generation, so the pool's ended leases are deleted a minute"
                                + " after they end and left to VACUUM"
                                + " (docs/pool.md, \"Leases and the MVCC horizon\")");
            }
        }
        return known;
    }

    /** A live lease of the partition being looked at: not released, not expired. */
    private static Condition live() {
        return DSL.field(DSL.name(CHANNEL_ACCOUNT_LEASES.RELEASED_AT.getName()))
                .isNull()
                .and(DSL.field(DSL.name(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL.getName()), OffsetDateTime.class)
                        .gt(PoolStatements.clockTimestamp()));
    }

    /**
     * Moves the oldest slot's live leases into the current slot, at most {@link #MOVE_BATCH} at a
     * time, every column kept, skipping those a release or extension is changing; its ended ones
     * stay, for the TRUNCATE. One statement ({@code WITH moved AS (DELETE ... RETURNING ...)
     * INSERT ... SELECT}), so that a release waiting for a moved lease's row finds it deleted and
     * looks again, rather than failing as it would on a row an UPDATE moved between partitions.
     */
    private static int makeRoom(DSLContext tx, int oldest, int current) {
        var leases = CHANNEL_ACCOUNT_LEASES;
        var picked = DSL.select(leases.PUBLIC_KEY, leases.BUCKET, leases.FENCE)
                .from(leases)
                .where(leases.SLOT.eq((short) oldest))
                .and(PoolStatements.live(leases, PoolStatements.clockTimestamp()))
                .orderBy(leases.FENCE)
                .limit(MOVE_BATCH)
                .forUpdate()
                .skipLocked();
        // by key and fence: the fences carried over by pool-008 are each account's own count, not unique
        return RotatingPartitions.move(
                tx,
                leases,
                leases.SLOT,
                oldest,
                DSL.row(leases.PUBLIC_KEY, leases.BUCKET, leases.FENCE).in(picked),
                current);
    }
}

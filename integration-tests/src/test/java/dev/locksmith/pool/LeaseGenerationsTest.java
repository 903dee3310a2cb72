package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.DatabaseTest;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lease table's generations ({@link LeaseGenerations}) while another session holds the MVCC
 * horizon back: the row versions leases leave behind go by TRUNCATE of a slot that holds no live
 * lease, so the lease table stays about one generation large where, without the turns, it grows
 * with every lease (the naive variant, measured in the same test); a lease held across the turns
 * is moved, not lost, and its holder still extends and releases it.
 */
class LeaseGenerationsTest extends DatabaseTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    /** Acquire + release cycles per run: about 2 MB of lease row versions, four times a full slot. */
    private static final int CYCLES = 8_000;

    private ChannelAccountPool accounts;

    @BeforeEach
    void pool() {
        dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
        dsl.execute("TRUNCATE locksmith.channel_account_leases");
        accounts = new ChannelAccountPool(dsl);
        accounts.register(dsl, List.of("G1", "G2", "G3", "G4"));
    }

    @Test
    void underAHeldHorizonTheTurnsKeepTheLeasesAboutOneGenerationLarge() throws Exception {
        try (Connection holder = pool.getConnection()) {
            holdHorizon(holder);
            long turned = cycles();
            dsl.execute("TRUNCATE locksmith.channel_account_leases");
            long naive = naiveCycles();
            System.out.printf(
                    "lease table after %d leases under a held horizon: %d kB with the turns, %d kB without%n",
                    CYCLES, turned >> 10, naive >> 10);
            assertThat(naive).as("without turns").isGreaterThan(4 * LeaseGenerations.FULL_BYTES);
            assertThat(turned).as("with turns").isLessThan(2 * LeaseGenerations.FULL_BYTES);
            holder.rollback();
        }
    }

    @Test
    void aLeaseHeldAcrossTheTurnsIsMovedAndStaysItsHolders() {
        ChannelAccount held = accounts.acquire(MINUTE, "long-holder").orElseThrow();
        LeaseGenerations generations = new LeaseGenerations(dsl);
        long start = generation();
        short first = slotOf(held);
        // live leases (of a key the pool does not have) fill every slot in turn, so that none
        // empties: the fourth turn finds no empty slot and moves the oldest slot's live leases,
        // oldest first, into the current one
        int moved = 0;
        for (int turn = 0; turn < 4; turn++) {
            fillCurrentSlot();
            moved += generations.step().moved();
        }
        assertThat(generation()).isEqualTo(start + 3);
        assertThat(moved).isEqualTo(LeaseGenerations.MOVE_BATCH);
        assertThat(slotOf(held)).as("moved out of its first slot").isNotEqualTo(first);

        ChannelAccount found = accounts.find(dsl, held.publicKey()).orElseThrow();
        assertThat(found.holder()).contains("long-holder");
        assertThat(found.fence()).isEqualTo(held.fence());
        OffsetDateTime extended = dsl.transactionResult(
                c -> accounts.extend(c.dsl(), held.publicKey(), "long-holder", Duration.ofMinutes(5)));
        assertThat(extended).isAfter(held.lockedUntil());
        dsl.transaction(c -> accounts.release(c.dsl(), held.publicKey(), "long-holder"));
        assertThat(accounts.find(dsl, held.publicKey()).orElseThrow().holder()).isEmpty();
    }

    /**
     * Where the slots are not turned (Citus, or a role that may not truncate them), the leases that
     * ended or ran out more than a minute ago are deleted; the recent ones stay (the last use the
     * pick orders by), and live ones are never touched.
     */
    @Test
    void pruningDeletesOnlyLeasesEndedMoreThanAMinuteAgo() {
        dsl.execute("INSERT INTO locksmith.channel_account_leases"
                + " (public_key, locked_by, locked_at, locked_until, released_at) VALUES"
                + " ('G1', 'released-long-ago', now() - interval '5 minutes', now() - interval '2 minutes',"
                + "  now() - interval '2 minutes'),"
                + " ('G2', 'lapsed-long-ago', now() - interval '5 minutes', now() - interval '3 minutes', NULL),"
                + " ('G3', 'released-just-now', now() - interval '1 minute', now() - interval '5 seconds',"
                + "  now() - interval '5 seconds'),"
                + " ('G4', 'live', now(), now() + interval '1 minute', NULL)");

        assertThat(new LeaseGenerations(dsl).prune()).isEqualTo(2);
        assertThat(dsl.select(CHANNEL_ACCOUNT_LEASES.LOCKED_BY)
                        .from(CHANNEL_ACCOUNT_LEASES)
                        .fetch(CHANNEL_ACCOUNT_LEASES.LOCKED_BY))
                .containsExactlyInAnyOrder("released-just-now", "live");
    }

    /**
     * {@link #CYCLES} acquire + release cycles of the pool, the generations turned every 250 (as
     * well as by the acquisitions themselves, once a second); the lease table's size after.
     */
    private long cycles() {
        LeaseGenerations generations = new LeaseGenerations(dsl);
        for (int i = 0; i < CYCLES; i++) {
            String owner = "o" + i;
            ChannelAccount account = accounts.acquire(MINUTE, owner).orElseThrow();
            accounts.release(dsl, account.publicKey(), owner);
            if (i % 250 == 249) {
                generations.step();
            }
        }
        return leaseTableBytes();
    }

    /** The naive variant: the same lease rows inserted and ended, in one table that nothing turns. */
    private long naiveCycles() {
        for (int i = 0; i < CYCLES; i++) {
            String owner = "o" + i;
            dsl.execute(
                    "INSERT INTO locksmith.channel_account_leases (public_key, locked_by, locked_at, locked_until)"
                            + " VALUES ('G1', ?, now(), now() + interval '1 minute')",
                    owner);
            dsl.execute(
                    "UPDATE locksmith.channel_account_leases SET locked_until = clock_timestamp(),"
                            + " released_at = clock_timestamp() WHERE public_key = 'G1' AND locked_by = ?",
                    owner);
        }
        return leaseTableBytes();
    }

    private long leaseTableBytes() {
        return dsl.fetchOne("SELECT sum(pg_relation_size(c.oid)) FROM pg_catalog.pg_inherits i"
                        + " JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid"
                        + " WHERE i.inhparent = 'locksmith.channel_account_leases'::regclass")
                .get(0, Long.class);
    }

    /** Live leases of a key the pool does not have, enough to make the current slot full. */
    private void fillCurrentSlot() {
        dsl.execute("INSERT INTO locksmith.channel_account_leases (public_key, locked_by, locked_at, locked_until)"
                + " SELECT 'GFILL', 'filler-' || i, now(), now() + interval '1 hour' FROM generate_series(1, 4000) i");
    }

    private long generation() {
        return dsl.fetchOne("SELECT last_value FROM locksmith.channel_account_lease_generation")
                .get(0, Long.class);
    }

    private short slotOf(ChannelAccount lease) {
        return dsl.select(CHANNEL_ACCOUNT_LEASES.SLOT)
                .from(CHANNEL_ACCOUNT_LEASES)
                .where(CHANNEL_ACCOUNT_LEASES.FENCE.eq(lease.fence()))
                .fetchSingle(CHANNEL_ACCOUNT_LEASES.SLOT);
    }

    /** Opens a REPEATABLE READ transaction on {@code holder} and takes its snapshot: the horizon is held until it ends. */
    private static void holdHorizon(Connection holder) throws Exception {
        holder.setAutoCommit(false);
        try (Statement s = holder.createStatement()) {
            s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
            s.execute("SELECT txid_current()");
        }
    }
}

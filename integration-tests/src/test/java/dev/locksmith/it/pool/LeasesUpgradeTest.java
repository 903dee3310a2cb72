package dev.locksmith.it.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.EmptyDatabaseTest;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.schema.AppliedChangeSet;
import dev.locksmith.schema.LocksmithSchema;
import dev.locksmith.schema.SchemaModule;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.jooq.Record;
import org.junit.jupiter.api.Test;

/**
 * Change set {@code pool-008-channel-account-leases} on a pool in use: leases that lived in the
 * accounts' rows move to {@code channel_account_leases} with their holders, expiries and fences;
 * an expired one is not carried (its account is idle); new fences start above every old one. Its
 * rollback carries live leases back into the accounts' rows.
 */
class LeasesUpgradeTest extends EmptyDatabaseTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    @Override
    protected String databaseName() {
        return "leases_upgrade";
    }

    @Override
    protected int poolSize() {
        return 4;
    }

    @Test
    void liveLeasesMoveOverWithTheirHoldersAndFencesAndBackOnRollback() {
        LocksmithSchema.migrate(pool, "locksmith", Set.of(SchemaModule.POOL));
        ChannelAccountPool accounts = new ChannelAccountPool(dsl);
        accounts.register(dsl, List.of("GROLLED"));
        ChannelAccount rolled = accounts.acquire(MINUTE, "before-rollback").orElseThrow();
        accounts.register(dsl, List.of("GNEVER"));

        List<AppliedChangeSet> remaining = LocksmithSchema.rollback(pool, 3);
        assertThat(remaining).extracting(AppliedChangeSet::id).last().isEqualTo("pool-007-channel-accounts-fence");
        Record back =
                dsl.fetchOne("SELECT locked_by, fence FROM locksmith.channel_accounts WHERE public_key = 'GROLLED'");
        assertThat(back.get("locked_by", String.class)).isEqualTo("before-rollback");
        assertThat(back.get("fence", Long.class)).isEqualTo(rolled.fence());
        // an account never leased gets the last fence handed out too, so that the old layout's next
        // lease of it (its count + 1) is above every fence a holder may still carry
        assertThat(dsl.fetchOne("SELECT fence FROM locksmith.channel_accounts WHERE public_key = 'GNEVER'")
                        .get(0, Long.class))
                .isEqualTo(rolled.fence());
        // a role that could acquire, release and extend in the old layout (all updates of the accounts)
        String role = "leases_upgrade_" + Long.toHexString(System.nanoTime());
        dsl.execute("CREATE ROLE " + role);
        dsl.execute("GRANT SELECT, UPDATE ON locksmith.channel_accounts TO " + role);

        // the pool as the previous release left it: leased, expired and idle accounts
        dsl.execute("INSERT INTO locksmith.channel_accounts (public_key, locked_by, locked_at, locked_until, fence)"
                + " VALUES ('GLEASED', 'holder-1', now(), now() + interval '10 minutes', 41),"
                + " ('GLAPSED', 'holder-2', now() - interval '2 minutes', now() - interval '1 minute', 7)");
        dsl.execute("INSERT INTO locksmith.channel_accounts (public_key, fence) VALUES ('GIDLE', 3)");

        LocksmithSchema.migrate(pool, "locksmith", Set.of(SchemaModule.POOL));
        ChannelAccountPool upgraded = new ChannelAccountPool(dsl);
        try {
            // may do the same in the new one: write leases, turn their slots, draw fences
            assertThat(dsl.fetchOne(
                                    "SELECT has_table_privilege(?, 'locksmith.channel_account_leases',"
                                            + " 'SELECT, INSERT, UPDATE, DELETE')"
                                            + " AND has_table_privilege(?, 'locksmith.channel_account_leases_slot2', 'TRUNCATE')"
                                            + " AND has_sequence_privilege(?, 'locksmith.channel_account_fence', 'USAGE')"
                                            + " AND has_sequence_privilege(?, 'locksmith.channel_account_lease_generation',"
                                            + " 'UPDATE')",
                                    role,
                                    role,
                                    role,
                                    role)
                            .get(0, Boolean.class))
                    .isTrue();
        } finally {
            dsl.execute("DROP OWNED BY " + role);
            dsl.execute("DROP ROLE " + role);
        }

        ChannelAccount leased = upgraded.find(dsl, "GLEASED").orElseThrow();
        assertThat(leased.holder()).contains("holder-1");
        assertThat(leased.fence()).isEqualTo(41);
        assertThat(upgraded.find(dsl, "GROLLED").orElseThrow().holder()).contains("before-rollback");
        assertThat(upgraded.find(dsl, "GLAPSED").orElseThrow().holder()).isEmpty();
        assertThat(upgraded.find(dsl, "GIDLE").orElseThrow().holder()).isEmpty();
        assertThat(upgraded.stats().leased()).isEqualTo(2);

        // the three idle accounts go to new holders, with fences above every old one
        ChannelAccount first = upgraded.acquire(MINUTE, "new-1").orElseThrow();
        ChannelAccount second = upgraded.acquire(MINUTE, "new-2").orElseThrow();
        ChannelAccount third = upgraded.acquire(MINUTE, "new-4").orElseThrow();
        assertThat(List.of(first.publicKey(), second.publicKey(), third.publicKey()))
                .containsExactlyInAnyOrder("GLAPSED", "GIDLE", "GNEVER");
        assertThat(first.fence()).isGreaterThan(41);
        assertThat(second.fence()).isGreaterThan(first.fence());
        assertThat(upgraded.acquire(MINUTE, "new-3")).isEmpty();

        // the old holder still holds its lease: it releases it, and the account is acquirable
        dsl.transaction(c -> upgraded.release(c.dsl(), "GLEASED", "holder-1"));
        assertThat(upgraded.acquire(MINUTE, "new-3").orElseThrow().publicKey()).isEqualTo("GLEASED");
        assertThat(dsl.fetchValue("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'locksmith'"
                        + " AND table_name = 'channel_accounts' AND column_name IN ('locked_by', 'fence')"))
                .isEqualTo(0L);
    }
}

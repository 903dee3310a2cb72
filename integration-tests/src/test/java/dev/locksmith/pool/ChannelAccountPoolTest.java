package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.it.support.DatabaseTest;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Leasing, releasing with the caller's transaction, expiry, exhaustion, bounded waits, bad input. */
class ChannelAccountPoolTest extends DatabaseTest {

    private static ChannelAccountPoolConfig config(AcquireStrategy strategy) {
        return ChannelAccountPoolConfig.builder().strategy(strategy).build();
    }

    static final Duration MINUTE = Duration.ofMinutes(1);
    static final Duration DAY = Duration.ofDays(1);

    @BeforeEach
    void emptyPool() {
        dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
    }

    private ChannelAccountPool pool(AcquireStrategy strategy) {
        return new ChannelAccountPool(dsl, config(strategy));
    }

    private List<String> keys(int n) {
        return IntStream.range(0, n).mapToObj(i -> String.format("G%05d", i)).toList();
    }

    /** Waits on the database clock until the account's lease has expired. */
    private void awaitExpiry(String key) {
        dsl.execute(
                "SELECT pg_sleep(greatest(0, extract(epoch FROM (max(locked_until) - clock_timestamp())) + 0.01)) "
                        + "FROM locksmith.channel_account_leases WHERE public_key = ?",
                key);
    }

    @Test
    void rejectsBadInputAndWritesNothing() {
        ChannelAccountPool pool = pool(AcquireStrategy.RANDOM_START);
        assertThatThrownBy(() -> pool.register(dsl, Arrays.asList("G1", null)))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> pool.register(dsl, List.of("G1", " "))).hasMessageContaining("publicKey");
        assertThat(dsl.fetchCount(CHANNEL_ACCOUNTS)).isZero();
        pool.register(dsl, List.of("G1"));
        assertThatThrownBy(() -> pool.acquire(Duration.ZERO, "me")).hasMessageContaining("lease");
        assertThatThrownBy(() -> pool.acquire(Duration.ofSeconds(-1), "me")).hasMessageContaining("lease");
        assertThatThrownBy(() -> pool.acquire(MINUTE, "")).hasMessageContaining("owner");
        assertThatThrownBy(() -> pool.release(dsl, "unknown", "me"))
                .isInstanceOf(ChannelAccountNotFoundException.class);
        assertThatThrownBy(() -> pool.release(dsl, "G1", "me"))
                .isInstanceOf(LeaseNotHeldException.class)
                .hasMessageContaining("idle");
        assertThatThrownBy(() -> pool.extend(dsl, "G1", "me", Duration.ZERO)).hasMessageContaining("lease");
        assertThat(pool.stats()).isEqualTo(new PoolStats(1, 1, 0, 0));
    }

    @Test
    void oversizedDurationsAreRefusedNamingTheParameterAndTheBound() {
        ChannelAccountPool pool = pool(AcquireStrategy.RANDOM_START);
        pool.register(dsl, List.of("G1"));
        for (Duration huge : List.of(
                Duration.ofDays(365L * 1_000_000), Duration.ofSeconds(Long.MAX_VALUE), Duration.ofDays(36_526))) {
            assertThatThrownBy(() -> pool.acquire(huge, "me"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease must be at most 36525 days");
            assertThatThrownBy(() -> pool.acquire(MINUTE, "me", huge))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("maxWait must be at most 36525 days");
            assertThatThrownBy(() -> pool.extend(dsl, "G1", "me", huge))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease must be at most 36525 days");
        }
        assertThat(pool.stats()).isEqualTo(new PoolStats(1, 1, 0, 0));
        // the bound itself is accepted, and fits PostgreSQL's timestamps
        ChannelAccount held = pool.acquire(Duration.ofDays(36_525), "me").orElseThrow();
        assertThat(held.lockedUntil()).isAfter(held.lockedAt().plusYears(99));
    }

    @Test
    void extendLateInALongTransactionNeverShortensTheLease() {
        ChannelAccountPool pool = pool(AcquireStrategy.RANDOM_START);
        pool.register(dsl, List.of("G1"));
        ChannelAccount held = pool.acquire(Duration.ofSeconds(10), "me").orElseThrow();
        dsl.transaction(c -> {
            // now() stays at the start of this transaction; the extension is made 0.3 s later
            c.dsl().execute("SELECT pg_sleep(0.3)");
            OffsetDateTime shortOne = pool.extend(c.dsl(), "G1", "me", Duration.ofSeconds(1));
            assertThat(shortOne).isEqualTo(held.lockedUntil());
            OffsetDateTime before = c.dsl()
                    .select(org.jooq.impl.DSL.field("clock_timestamp()", OffsetDateTime.class))
                    .fetchSingle()
                    .value1();
            OffsetDateTime longer = pool.extend(c.dsl(), "G1", "me", MINUTE);
            assertThat(longer).isAfterOrEqualTo(before.plus(MINUTE));
        });
        assertThat(pool.find(dsl, "G1").orElseThrow().lockedUntil())
                .isAfterOrEqualTo(held.lockedUntil().plusSeconds(50));
        assertThat(pool.acquire(MINUTE, "someone-else")).isEmpty();
    }

    @Test
    void registerIsIdempotentAndRemoveLeavesLeasedAccounts() {
        ChannelAccountPool pool = pool(AcquireStrategy.RANDOM_START);
        assertThat(pool.register(dsl, List.of("G1", "G2", "G3"))).isEqualTo(3);
        assertThat(pool.register(dsl, List.of("G3", "G4"))).isEqualTo(1);
        String leased = pool.acquire(MINUTE, "me").orElseThrow().publicKey();
        assertThat(pool.remove(dsl, List.of("G1", "G2", "G3", "G4"))).isEqualTo(3);
        assertThat(pool.find(dsl, leased)).map(ChannelAccount::lockedBy).contains("me");
    }

    @ParameterizedTest
    @EnumSource(AcquireStrategy.class)
    void releaseCommitsAndRollsBackWithTheCallersTransaction(AcquireStrategy strategy) {
        ChannelAccountPool pool = pool(strategy);
        pool.register(dsl, List.of("G1"));
        ChannelAccount account = pool.acquire(MINUTE, "request-1").orElseThrow();

        assertThatThrownBy(() -> dsl.transaction(c -> {
                    pool.release(c.dsl(), account.publicKey(), "request-1");
                    throw new IllegalStateException("ledger write failed");
                }))
                .hasMessageContaining("ledger write failed");
        assertThat(pool.find(dsl, "G1").orElseThrow().lockedBy()).isEqualTo("request-1");
        assertThat(pool.acquire(MINUTE, "request-2")).isEmpty();

        dsl.transaction(c -> pool.release(c.dsl(), account.publicKey(), "request-1"));
        assertThat(pool.find(dsl, "G1").orElseThrow().holder()).isEmpty();
        assertThat(pool.acquire(MINUTE, "request-2"))
                .map(ChannelAccount::publicKey)
                .contains("G1");
    }

    @ParameterizedTest
    @EnumSource(AcquireStrategy.class)
    void expiredLeaseGoesToTheNextOwnerAndTheOldOwnerIsRefused(AcquireStrategy strategy) {
        ChannelAccountPool pool = pool(strategy);
        pool.register(dsl, List.of("G1"));
        pool.acquire(Duration.ofMillis(100), "old");
        assertThat(pool.acquire(MINUTE, "new")).isEmpty();
        awaitExpiry("G1");
        assertThat(pool.stats().expired()).isEqualTo(1);

        assertThat(pool.acquire(MINUTE, "new")).map(ChannelAccount::publicKey).contains("G1");

        assertThatThrownBy(() -> dsl.transaction(c -> pool.release(c.dsl(), "G1", "old")))
                .isInstanceOfSatisfying(
                        LeaseNotHeldException.class,
                        e -> assertThat(e.getMessage()).contains("held by new"));
        assertThatThrownBy(() -> pool.extend(dsl, "G1", "old", MINUTE)).isInstanceOf(LeaseNotHeldException.class);
        assertThat(pool.find(dsl, "G1").orElseThrow().lockedBy()).isEqualTo("new");
        assertThat(pool.extend(dsl, "G1", "new", Duration.ofHours(1)))
                .isAfter(pool.find(dsl, "G1").orElseThrow().lockedAt());
    }

    @Test
    void expiredButNotReacquiredLeaseCannotBeReleasedEitherAndExpireLeasesClearsIt() {
        ChannelAccountPool pool = pool(AcquireStrategy.RANDOM_START);
        pool.register(dsl, List.of("G1"));
        pool.acquire(Duration.ofMillis(50), "old");
        awaitExpiry("G1");
        assertThatThrownBy(() -> pool.release(dsl, "G1", "old")).isInstanceOf(LeaseNotHeldException.class);
        assertThat(pool.expireLeases()).isEqualTo(1);
        assertThat(pool.stats()).isEqualTo(new PoolStats(1, 1, 0, 0));
    }

    /**
     * An acquisition that joins a REPEATABLE READ or SERIALIZABLE transaction (a pool on a
     * connection the caller keeps in one) is refused before its lease, and so is a removal in one:
     * the look for a live lease after the accounts' locks would reuse the transaction's snapshot
     * (and SERIALIZABLE's checks do not see the READ COMMITTED acquisitions). Nothing is written.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(
            ints = {java.sql.Connection.TRANSACTION_REPEATABLE_READ, java.sql.Connection.TRANSACTION_SERIALIZABLE})
    void repeatableReadAndSerializableAreRefusedByAcquireAndRemoveWithNothingWritten(int isolation) throws Exception {
        pool(AcquireStrategy.RANDOM_PROBES).register(dsl, List.of("G1"));
        try (java.sql.Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            connection.setTransactionIsolation(isolation);
            org.jooq.DSLContext inRepeatableRead = org.jooq.impl.DSL.using(connection, org.jooq.SQLDialect.POSTGRES);
            ChannelAccountPool joined = new ChannelAccountPool(inRepeatableRead);
            assertThatThrownBy(() -> joined.acquire(MINUTE, "joiner"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("READ COMMITTED");
            connection.rollback();
            assertThatThrownBy(() -> joined.remove(inRepeatableRead, List.of("G1")))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("READ COMMITTED");
            connection.rollback();
            assertThat(dsl.fetchCount(CHANNEL_ACCOUNT_LEASES)).isZero();
            assertThat(pool(AcquireStrategy.RANDOM_PROBES).find(dsl, "G1")).isPresent();
            // READ COMMITTED on the same connection: the acquisition goes through
            connection.setTransactionIsolation(java.sql.Connection.TRANSACTION_READ_COMMITTED);
            assertThat(joined.acquire(MINUTE, "joiner"))
                    .map(ChannelAccount::lockedBy)
                    .contains("joiner");
        }
    }

    /**
     * An extension in flight when its lease runs out: the holder's transaction has moved the expiry
     * but not committed, and the old expiry passes. An acquirer then sees the committed lease
     * expired; without the extension's lock on the account's row it would take the account, and the
     * holder's commit would leave two live leases of it. With the lock the acquirer passes the
     * account over, and the holder keeps it alone.
     */
    /**
     * A pool on connections that do not auto-commit (a {@code DataSource} configured so), outside
     * any transaction: the acquisition commits its lease itself, so the rollback with which a
     * connection pool hands such a connection back does not undo it (one bare statement would
     * leave the lease in an open transaction, and the caller holding an account nobody sees leased).
     */
    @Test
    void onAConnectionThatDoesNotAutoCommitTheLeaseIsCommitted() throws Exception {
        new ChannelAccountPool(dsl).register(dsl, List.of("G1"));
        try (java.sql.Connection manual = pool.getConnection()) {
            manual.setAutoCommit(false);
            ChannelAccountPool onManual =
                    new ChannelAccountPool(org.jooq.impl.DSL.using(manual, org.jooq.SQLDialect.POSTGRES));
            assertThat(onManual.acquire(MINUTE, "manual")).isPresent();
            manual.rollback(); // what a connection pool does with an uncommitted connection it gets back
            manual.setAutoCommit(true);
        }
        assertThat(dsl.fetchCount(
                        CHANNEL_ACCOUNT_LEASES,
                        CHANNEL_ACCOUNT_LEASES.LOCKED_BY.eq("manual").and(CHANNEL_ACCOUNT_LEASES.RELEASED_AT.isNull())))
                .isEqualTo(1);
        assertThat(new ChannelAccountPool(dsl).acquire(MINUTE, "other")).isEmpty();
    }

    @Test
    void anExtensionInFlightWhenItsLeaseRunsOutKeepsTheAccountFromAnAcquirer() throws Exception {
        ChannelAccountPool accounts = pool(AcquireStrategy.RANDOM_PROBES);
        accounts.register(dsl, List.of("G1"));
        accounts.acquire(Duration.ofSeconds(1), "holder").orElseThrow();
        try (java.sql.Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            org.jooq.DSLContext holderTx = org.jooq.impl.DSL.using(connection, org.jooq.SQLDialect.POSTGRES);
            accounts.extend(holderTx, "G1", "holder", Duration.ofMinutes(1));
            awaitExpiry("G1"); // the committed lease's expiry, on the database clock
            assertThat(accounts.acquire(MINUTE, "acquirer"))
                    .as("the account, mid-extension")
                    .isEmpty();
            connection.commit();
        }
        assertThat(accounts.find(dsl, "G1").orElseThrow().holder()).contains("holder");
        assertThat(dsl.fetchCount(
                        CHANNEL_ACCOUNT_LEASES,
                        CHANNEL_ACCOUNT_LEASES
                                .RELEASED_AT
                                .isNull()
                                .and(CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL.gt(
                                        org.jooq.impl.DSL.currentOffsetDateTime()))))
                .isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(AcquireStrategy.class)
    void exhaustionReturnsEmptyAtOnceAndTheBoundedWaitGivesUpAfterItsDeadline(AcquireStrategy strategy) {
        ChannelAccountPool pool = pool(strategy);
        pool.register(dsl, List.of("G1", "G2"));
        assertThat(pool.acquire(MINUTE, "a")).isPresent();
        assertThat(pool.acquire(MINUTE, "b")).isPresent();
        assertThat(pool.acquire(MINUTE, "c")).isEmpty();

        Duration maxWait = Duration.ofMillis(150);
        long start = System.nanoTime();
        assertThat(pool.acquire(MINUTE, "c", maxWait)).isEmpty();
        // it kept trying for its whole budget (a lower bound: correctness, not speed)
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(maxWait);
    }

    @Test
    void boundedWaitSucceedsAsSoonAsAnAccountIsReleased() throws Exception {
        CountDownLatch waiting = new CountDownLatch(1);
        ChannelAccountPool pool = new ChannelAccountPool(
                dsl, config(AcquireStrategy.RANDOM_START), new SplittableRandom(7)::nextDouble, pause -> {
                    waiting.countDown(); // the waiter found the pool empty and is backing off
                    TimeUnit.NANOSECONDS.sleep(pause.toNanos());
                });
        pool.register(dsl, List.of("G1"));
        pool.acquire(MINUTE, "holder").orElseThrow();
        AtomicReference<Optional<ChannelAccount>> got = new AtomicReference<>();
        CountDownLatch acquired = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            got.set(pool.acquire(MINUTE, "waiter", Duration.ofSeconds(30)));
            acquired.countDown();
        });
        waiter.start();

        assertThat(waiting.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(acquired.getCount()).isEqualTo(1);
        dsl.transaction(c -> pool.release(c.dsl(), "G1", "holder"));

        assertThat(acquired.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(got.get()).map(ChannelAccount::lockedBy).contains("waiter");
    }

    @ParameterizedTest
    @EnumSource(AcquireStrategy.class)
    void acquisitionIsCorrectAtOneHundredAndAtOneHundredThousandAccounts(AcquireStrategy strategy) {
        for (int size : new int[] {100, 100_000}) {
            dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
            dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
            ChannelAccountPool pool = pool(strategy);
            List<String> all = keys(size);
            for (int from = 0; from < size; from += 10_000) {
                pool.register(dsl, all.subList(from, Math.min(size, from + 10_000)));
            }
            Set<String> registered = new HashSet<>(all);

            // leases of a day, not a minute: the bulk lease below passes over these accounts, so one
            // whose lease ran out before the last acquisition (a loaded machine, a clock that jumps)
            // would be free again and handed out in place of the one left untaken
            Set<String> taken = new HashSet<>();
            for (int i = 0; i < 50; i++) {
                ChannelAccount account = pool.acquire(DAY, "owner-" + i).orElseThrow();
                assertThat(registered).contains(account.publicKey());
                assertThat(taken.add(account.publicKey()))
                        .as("handed out twice: %s", account.publicKey())
                        .isTrue();
            }

            // everything leased but one: that one is found wherever it sits
            List<String> untaken = all.stream().filter(k -> !taken.contains(k)).toList();
            String last = untaken.get(new SplittableRandom(size).nextInt(untaken.size()));
            dsl.execute(
                    "INSERT INTO locksmith.channel_account_leases (public_key, locked_by, locked_at, locked_until)"
                            + " SELECT a.public_key, 'bulk', now(), now() + interval '1 day'"
                            + " FROM locksmith.channel_accounts a WHERE a.public_key <> ? AND NOT EXISTS"
                            + " (SELECT 1 FROM locksmith.channel_account_leases l WHERE l.public_key = a.public_key)",
                    last);
            // what the pool's turn of its lease generations does within a second of such growth
            // (LeaseGenerations.analyzeStale): the plans made while the table was small read it whole
            dsl.execute("ANALYZE locksmith.channel_account_leases");
            assertThat(pool.acquire(DAY, "finder"))
                    .map(ChannelAccount::publicKey)
                    .contains(last);
            assertThat(pool.acquire(MINUTE, "too-late")).isEmpty();
            assertThat(pool.stats()).isEqualTo(new PoolStats(size, 0, size, 0));
        }
    }

    @Test
    void everyKeyShapeIsReachableBecauseTheStartIsASlotNotAKey() {
        ChannelAccountPool pool = new ChannelAccountPool(
                dsl, config(AcquireStrategy.RANDOM_START), new SplittableRandom(3)::nextDouble, pause -> {});
        List<String> odd = new ArrayList<>(List.of("acct-1", "acct-2", "zzz", "AAA", "0"));
        pool.register(dsl, odd);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            String key = pool.acquire(MINUTE, "o").orElseThrow().publicKey();
            seen.add(key);
            dsl.transaction(c -> pool.release(c.dsl(), key, "o"));
        }
        assertThat(seen).containsExactlyInAnyOrderElementsOf(odd);
    }
}

package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import java.sql.Connection;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * 32 threads on separate connections lease and release 20 accounts over and over. An in-test
 * ledger of who holds what is checked on every acquire: a second holder would be caught at once.
 */
class PoolConcurrencyTest extends DatabaseTest {

    static final int THREADS = 32;
    static final int ACCOUNTS = 20;
    static final int CYCLES_PER_THREAD = 100;

    @Override
    protected int poolSize() {
        return THREADS + 4;
    }

    @BeforeEach
    void emptyPool() {
        dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
    }

    @ParameterizedTest
    @EnumSource(AcquireStrategy.class)
    void noAccountIsEverHeldByTwoOwnersAndEveryThreadMakesProgress(AcquireStrategy strategy) throws Exception {
        ChannelAccountPool pool = new ChannelAccountPool(
                dsl, ChannelAccountPoolConfig.builder().strategy(strategy).build());
        pool.register(dsl, IntStream.range(0, ACCOUNTS).mapToObj(i -> "G" + i).toList());
        Map<String, String> ledger = new ConcurrentHashMap<>();
        AtomicInteger doubleHolds = new AtomicInteger();
        AtomicInteger emptyAcquires = new AtomicInteger();

        List<Integer> cycles = Concurrently.run(THREADS, 300, thread -> {
            int done = 0;
            for (int i = 0; i < CYCLES_PER_THREAD; i++) {
                String owner = "t" + thread + "-" + i;
                ChannelAccount account;
                while (true) {
                    var acquired = pool.acquire(Duration.ofMinutes(1), owner);
                    if (acquired.isPresent()) {
                        account = acquired.get();
                        break;
                    }
                    emptyAcquires.incrementAndGet();
                    Thread.onSpinWait();
                }
                String previous = ledger.putIfAbsent(account.publicKey(), owner);
                if (previous != null) {
                    doubleHolds.incrementAndGet();
                }
                // "submit the transaction", then release in the same transaction as the ledger write
                ledger.remove(account.publicKey(), owner);
                String key = account.publicKey();
                dsl.transaction(c -> pool.release(c.dsl(), key, owner));
                done++;
            }
            return done;
        });

        System.out.printf(
                "pool %-15s %d threads x %d cycles over %d accounts: double holds %d, empty acquires %d%n",
                strategy, THREADS, CYCLES_PER_THREAD, ACCOUNTS, doubleHolds.get(), emptyAcquires.get());
        assertThat(doubleHolds).hasValue(0);
        assertThat(cycles).hasSize(THREADS).containsOnly(CYCLES_PER_THREAD);
        assertThat(pool.stats().idle()).isEqualTo(ACCOUNTS);
    }

    /** The control: check-then-lease without row locks hands one account to two owners. */
    @org.junit.jupiter.api.Test
    void naiveSelectThenUpdateHandsTheSameAccountToTwoOwners() throws Exception {
        new ChannelAccountPool(dsl).register(dsl, List.of("G1", "G2"));
        java.util.concurrent.CyclicBarrier bothChecked = new java.util.concurrent.CyclicBarrier(2);
        List<String> got = Concurrently.run(2, 60, thread -> {
            String idle =
                    (String) dsl.fetchValue("SELECT a.public_key FROM locksmith.channel_accounts a WHERE NOT EXISTS"
                            + " (SELECT 1 FROM locksmith.channel_account_leases l WHERE l.public_key = a.public_key)"
                            + " ORDER BY a.public_key LIMIT 1");
            bothChecked.await(30, java.util.concurrent.TimeUnit.SECONDS);
            dsl.execute(
                    "INSERT INTO locksmith.channel_account_leases (public_key, locked_by, locked_at, locked_until)"
                            + " VALUES (?, ?, now(), now() + interval '1 day')",
                    idle,
                    "naive-" + thread);
            return idle;
        });
        assertThat(got.get(0)).isEqualTo(got.get(1)); // both callers believe they hold G1
    }

    /**
     * The control for the look after the lock: the same lock and the same look for a live lease,
     * but the look with the statement's own snapshot, which predates its lock. A gate (an advisory lock
     * the test holds, which the statement takes after its snapshot and before its row lock) stands
     * for the moment between the two: while the statement waits there, the library's pool leases
     * the only account and commits; the statement then locks the account (free again) and, by its
     * old snapshot, sees no live lease: the account has two live leases.
     */
    @org.junit.jupiter.api.Test
    void aLockAndALookInOneStatementLeasesAnAccountTwice() throws Exception {
        assertThat(liveLeasesAfterAGatedAcquisition(Gated.ONE_STATEMENT)).isEqualTo(2);
    }

    /**
     * The same gate before the library's look (after the lock, with a snapshot of its own) leases
     * nothing: in a statement after the lock's (the library's order on Citus), and in the same
     * statement through the schema's VOLATILE function {@code channel_account_leased} (the
     * library's order on one server).
     */
    @ParameterizedTest
    @EnumSource(
            value = Gated.class,
            names = {"TWO_STATEMENTS", "ONE_STATEMENT_WITH_THE_FUNCTION"})
    void aLookWithASnapshotAfterTheLockSeesTheLeaseTakenWhileItWaited(Gated form) throws Exception {
        assertThat(liveLeasesAfterAGatedAcquisition(form)).isEqualTo(1);
    }

    /** How a gated acquisition looks for a live lease after its lock. */
    enum Gated {
        /** In the pick's statement, with its snapshot. */
        ONE_STATEMENT,
        /** In a statement after the pick's. */
        TWO_STATEMENTS,
        /** In the pick's statement, through {@code channel_account_leased}. */
        ONE_STATEMENT_WITH_THE_FUNCTION
    }

    private static final long GATE = 4242;
    private static final String LIVE = "l.released_at IS NULL AND l.locked_until > now()";
    private static final String NOT_LEASED =
            " NOT EXISTS (SELECT 1 FROM locksmith.channel_account_leases l WHERE l.public_key = %s AND " + LIVE + ")";
    private static final String GATED_PICK = "SELECT a.public_key FROM locksmith.channel_accounts a"
            + " WHERE (SELECT pg_advisory_xact_lock(" + GATE + ")) IS NOT NULL AND"
            + NOT_LEASED.formatted("a.public_key") + " LIMIT 1 FOR UPDATE OF a SKIP LOCKED";
    /** The lease of %1$s, from %2$s, unless %3$s finds a live one. */
    private static final String LEASE = "INSERT INTO locksmith.channel_account_leases"
            + " (public_key, locked_by, locked_at, locked_until)"
            + " SELECT %1$s, 'gated', now(), now() + interval '1 day' %2$s WHERE %3$s RETURNING public_key";

    /**
     * One account; a gated acquisition is held at the gate while the pool leases the account;
     * returns the account's live leases after.
     */
    private int liveLeasesAfterAGatedAcquisition(Gated form) throws Exception {
        ChannelAccountPool accounts = new ChannelAccountPool(dsl);
        accounts.register(dsl, List.of("G1"));
        String withPicked = "WITH picked AS (" + GATED_PICK + ") ";
        try (Connection gateSession = pool.getConnection()) {
            DSLContext gate = DSL.using(gateSession, SQLDialect.POSTGRES);
            gate.execute("SELECT pg_advisory_lock(" + GATE + ")");
            var gated = CompletableFuture.supplyAsync(() -> switch (form) {
                case ONE_STATEMENT ->
                    dsl.fetch(withPicked
                            + LEASE.formatted("p.public_key", "FROM picked p", NOT_LEASED.formatted("p.public_key")));
                case ONE_STATEMENT_WITH_THE_FUNCTION ->
                    dsl.fetch(withPicked
                            + LEASE.formatted(
                                    "p.public_key",
                                    "FROM picked p",
                                    "NOT locksmith.channel_account_leased(p.public_key)"));
                case TWO_STATEMENTS ->
                    dsl.transactionResult(c -> {
                        Object picked = c.dsl().fetchValue(GATED_PICK);
                        return c.dsl()
                                .fetch(LEASE.formatted("?::text", "", NOT_LEASED.formatted("?::text")), picked, picked);
                    });
            });
            try {
                Await.until(
                        "the acquisition waiting at the gate",
                        Duration.ofSeconds(30),
                        () -> dsl.fetchExists(dsl.selectOne()
                                .from("pg_locks")
                                .where(
                                        "locktype = 'advisory' AND NOT granted AND classid = 0 AND objid = ?::oid"
                                                + " AND objsubid = 1 AND database = (SELECT oid FROM pg_database"
                                                + " WHERE datname = current_database())",
                                        GATE)));
                assertThat(accounts.acquire(Duration.ofDays(1), "meanwhile")).isPresent();
            } finally {
                // also when the test fails: the session lock would stay with the pooled connection
                gate.execute("SELECT pg_advisory_unlock_all()");
            }
            int leased = gated.get(30, TimeUnit.SECONDS).size();
            System.out.printf("gated acquisition, %s: leased %d%n", form, leased);
        }
        return dsl.fetchOne(
                        "SELECT count(*) FROM locksmith.channel_account_leases l WHERE public_key = 'G1' AND " + LIVE)
                .get(0, Integer.class);
    }

    /**
     * A chi-square test of the choices at p = 0.001, made deterministic so that it cannot fail by
     * chance: the client-side draws come from a seeded generator, and the server's
     * {@code random()} ({@link AcquireStrategy#ORDER_BY_RANDOM}) from a seeded session, since
     * every statement runs on one connection.
     */
    @ParameterizedTest
    @EnumSource(AcquireStrategy.class)
    void choicesFromAnIdlePoolOfFiftyAreSpreadEvenly(AcquireStrategy strategy) throws Exception {
        int accounts = 50;
        int draws = 5000;
        try (Connection session = pool.getConnection()) {
            DSLContext one = DSL.using(session, SQLDialect.POSTGRES);
            one.execute("SELECT setseed(?)", 0.42);
            ChannelAccountPool accountPool = new ChannelAccountPool(
                    one,
                    ChannelAccountPoolConfig.builder().strategy(strategy).build(),
                    new SplittableRandom(42)::nextDouble,
                    pause -> {});
            accountPool.register(
                    one, IntStream.range(0, accounts).mapToObj(i -> "G" + i).toList());
            Map<String, Integer> counts = new HashMap<>();
            for (int i = 0; i < draws; i++) {
                String key = accountPool
                        .acquire(Duration.ofMinutes(1), "o")
                        .orElseThrow()
                        .publicKey();
                counts.merge(key, 1, Integer::sum);
                one.transaction(c -> accountPool.release(c.dsl(), key, "o"));
            }
            double expected = (double) draws / accounts;
            double chiSquare = counts.values().stream()
                            .mapToDouble(n -> (n - expected) * (n - expected) / expected)
                            .sum()
                    + (accounts - counts.size()) * expected;
            System.out.printf(
                    "pool %-15s %d draws over %d idle accounts: chi-square %.1f (df %d; p=0.001 critical 85.4)%n",
                    strategy, draws, accounts, chiSquare, accounts - 1);
            assertThat(counts).hasSize(accounts);
            assertThat(chiSquare).isLessThan(85.35);
        }
    }
}

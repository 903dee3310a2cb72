package dev.locksmith.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import java.sql.Connection;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
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
            String idle = dsl.select(CHANNEL_ACCOUNTS.PUBLIC_KEY)
                    .from(CHANNEL_ACCOUNTS)
                    .where(CHANNEL_ACCOUNTS.LOCKED_UNTIL.isNull())
                    .orderBy(CHANNEL_ACCOUNTS.PUBLIC_KEY)
                    .limit(1)
                    .fetchSingle()
                    .value1();
            bothChecked.await(30, java.util.concurrent.TimeUnit.SECONDS);
            dsl.update(CHANNEL_ACCOUNTS)
                    .set(CHANNEL_ACCOUNTS.LOCKED_BY, "naive-" + thread)
                    .set(CHANNEL_ACCOUNTS.LOCKED_AT, org.jooq.impl.DSL.currentOffsetDateTime())
                    .set(
                            CHANNEL_ACCOUNTS.LOCKED_UNTIL,
                            org.jooq.impl.DSL.currentOffsetDateTime().plus(1))
                    .where(CHANNEL_ACCOUNTS.PUBLIC_KEY.eq(idle))
                    .execute();
            return idle;
        });
        assertThat(got.get(0)).isEqualTo(got.get(1)); // both callers believe they hold G1
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

package dev.locksmith.it.pool;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The default acquisition spreads over the idle accounts: 20,000 acquire + release cycles on a
 * pool of 1,000 with half of it leased at random, and with a gap of 100 removed accounts. Over
 * the idle accounts the counts must pass a chi-square test of uniformity at p = 0.001, and the
 * most-picked account may be picked at most 3 times as often as the least-picked.
 */
class PoolSpreadTest extends DatabaseTest {

    static final int ACCOUNTS = 1_000;
    static final int ACQUISITIONS = 20_000;
    static final Duration LEASE = Duration.ofMinutes(1);

    private ChannelAccountPool pool;
    private List<String> keys;

    @BeforeEach
    void fullPool() {
        dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
        pool = new ChannelAccountPool(dsl);
        keys = IntStream.range(0, ACCOUNTS)
                .mapToObj(i -> String.format("G%05d", i))
                .toList();
        pool.register(dsl, keys);
    }

    @Test
    void halfTheAccountsLeasedAtRandom() {
        List<String> shuffled = new ArrayList<>(keys);
        Collections.shuffle(shuffled, new Random(11));
        List<String> leased = shuffled.subList(0, ACCOUNTS / 2);
        dsl.insertInto(
                        CHANNEL_ACCOUNT_LEASES,
                        CHANNEL_ACCOUNT_LEASES.PUBLIC_KEY,
                        CHANNEL_ACCOUNT_LEASES.LOCKED_BY,
                        CHANNEL_ACCOUNT_LEASES.LOCKED_AT,
                        CHANNEL_ACCOUNT_LEASES.LOCKED_UNTIL)
                .select(DSL.select(
                                CHANNEL_ACCOUNTS.PUBLIC_KEY,
                                DSL.inline("long-lease"),
                                DSL.currentOffsetDateTime(),
                                DSL.currentOffsetDateTime().plus(1))
                        .from(CHANNEL_ACCOUNTS)
                        .where(CHANNEL_ACCOUNTS.PUBLIC_KEY.in(leased)))
                .execute();
        List<String> idle = shuffled.subList(ACCOUNTS / 2, ACCOUNTS);

        assertSpreadEvenly(cycle(), idle);
    }

    @Test
    void aGapOfOneHundredRemovedAccounts() {
        List<String> gap = keys.subList(400, 500);
        assertThat(pool.remove(dsl, gap)).isEqualTo(gap.size());
        List<String> idle = new ArrayList<>(keys);
        idle.removeAll(gap);

        assertSpreadEvenly(cycle(), idle);
    }

    /** {@link #ACQUISITIONS} acquire + release cycles, one at a time; how often each key came. */
    private Map<String, Integer> cycle() {
        Map<String, Integer> picks = new HashMap<>();
        for (int i = 0; i < ACQUISITIONS; i++) {
            String owner = "o" + i;
            ChannelAccount account = pool.acquire(LEASE, owner).orElseThrow();
            picks.merge(account.publicKey(), 1, Integer::sum);
            pool.release(dsl, account.publicKey(), owner);
        }
        return picks;
    }

    private static void assertSpreadEvenly(Map<String, Integer> picks, List<String> idle) {
        assertThat(idle).containsAll(picks.keySet());
        double expected = (double) ACQUISITIONS / idle.size();
        double chiSquare = 0;
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (String key : idle) {
            int n = picks.getOrDefault(key, 0);
            chiSquare += (n - expected) * (n - expected) / expected;
            min = Math.min(min, n);
            max = Math.max(max, n);
        }
        double critical = chiSquareCritical(idle.size() - 1);
        System.out.printf(
                "pool spread over %d idle accounts: min %d, max %d, max/min %.2f, chi-square %.1f "
                        + "(critical at p = 0.001: %.1f)%n",
                idle.size(), min, max, (double) max / Math.max(1, min), chiSquare, critical);
        assertThat(chiSquare)
                .as("chi-square over %d idle accounts", idle.size())
                .isLessThan(critical);
        assertThat(min).as("least-picked idle account").isPositive();
        assertThat((double) max / min).as("max/min selection ratio").isLessThanOrEqualTo(3.0);
    }

    /**
     * The chi-square value exceeded with probability 0.001 at {@code df} degrees of freedom, by the
     * Wilson-Hilferty approximation (within 0.1% of the exact value for df in the hundreds).
     */
    static double chiSquareCritical(int df) {
        double z = 3.090232; // upper 0.001 quantile of the standard normal
        double a = 2.0 / (9.0 * df);
        return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
    }
}

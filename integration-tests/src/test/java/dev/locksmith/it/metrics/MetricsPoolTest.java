package dev.locksmith.it.metrics;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.CountingContext;
import dev.locksmith.micrometer.PoolMetrics;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Pool acquisitions timed by outcome, and the pool gauges read once per refresh interval. */
class MetricsPoolTest extends MetricsDatabaseTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    @BeforeEach
    void emptyPool() {
        dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
    }

    @Test
    void acquisitionsAreTimedByOutcomeAndTimedOutWaitsCounted() {
        ChannelAccountPool pool = new ChannelAccountPool(observed);
        pool.register(observed, List.of("G1", "G2"));
        ChannelAccount first = pool.acquire(MINUTE, "r1").orElseThrow();
        assertThat(pool.acquire(MINUTE, "r2")).isPresent();
        assertThat(pool.acquire(MINUTE, "r3")).isEmpty();
        assertThat(pool.acquire(MINUTE, "r4", Duration.ofMillis(50))).isEmpty();
        observed.transaction(c -> pool.release(c.dsl(), first.publicKey(), "r1"));
        assertThat(pool.acquire(MINUTE, "r5", Duration.ofSeconds(5))).isPresent();

        assertThat(timed("locksmith.pool.acquire", "outcome", "ok")).isEqualTo(3);
        assertThat(timed("locksmith.pool.acquire", "outcome", "empty")).isEqualTo(1);
        assertThat(timed("locksmith.pool.acquire", "outcome", "timed_out")).isEqualTo(1);
        assertThat(timed("locksmith.pool.acquire")).isEqualTo(5);
        assertThat(counted("locksmith.pool.acquire.timeouts")).isEqualTo(1);
    }

    @Test
    void gaugesShowLeasedIdleAndExpiredAccountsReadOncePerRefreshInterval() {
        ChannelAccountPool pool = new ChannelAccountPool(dsl);
        pool.register(dsl, List.of("G1", "G2", "G3", "G4", "G5"));
        assertThat(pool.acquire(MINUTE, "kept")).isPresent();
        ChannelAccount released = pool.acquire(MINUTE, "released").orElseThrow();
        ChannelAccount lapsed = pool.acquire(MINUTE, "lapsed").orElseThrow();
        dsl.execute(
                "UPDATE locksmith.channel_account_leases SET locked_until = now() - interval '1 second' WHERE public_key = ?",
                lapsed.publicKey());
        MockClock clock = new MockClock();
        SimpleMeterRegistry gauges = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
        CountingContext counting = new CountingContext(dsl);
        PoolMetrics metrics = PoolMetrics.builder(new ChannelAccountPool(counting.dsl()))
                .refreshInterval(Duration.ofSeconds(10))
                .build();
        metrics.bindTo(gauges);

        assertThat(accounts(gauges, "leased")).isEqualTo(2);
        assertThat(accounts(gauges, "idle")).isEqualTo(2);
        assertThat(accounts(gauges, "expired")).isEqualTo(1);
        assertThat(counting.statements()).isEqualTo(1);

        dsl.transaction(c -> pool.release(c.dsl(), released.publicKey(), "released"));
        clock.add(Duration.ofSeconds(10).minusMillis(1));
        // within the interval: the reading is not repeated, whatever changed
        assertThat(accounts(gauges, "leased")).isEqualTo(2);
        assertThat(accounts(gauges, "idle")).isEqualTo(2);
        assertThat(counting.statements()).isEqualTo(1);

        clock.add(Duration.ofMillis(1));
        assertThat(accounts(gauges, "leased")).isEqualTo(1);
        assertThat(accounts(gauges, "idle")).isEqualTo(3);
        assertThat(accounts(gauges, "expired")).isEqualTo(1);
        assertThat(counting.statements()).isEqualTo(2);

        metrics.close();
        assertThat(gauges.find("locksmith.pool.accounts").gauges()).isEmpty();
        clock.add(Duration.ofMinutes(1));
        assertThat(counting.statements()).isEqualTo(2);
    }

    private static double accounts(SimpleMeterRegistry registry, String status) {
        return registry.get("locksmith.pool.accounts")
                .tag("status", status)
                .gauge()
                .value();
    }
}

package com.example.orders;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The example's own settings ({@code example.*}).
 *
 * @param demoAccounts opening balances of the accounts opened at start-up when there are none yet
 * @param channelAccounts the channel accounts registered in the pool at start-up (kept when
 *     already there)
 * @param channelLease how long an outbound call may hold its channel account before the lease
 *     lapses and another caller may take it
 * @param channelMaxWait how long {@code POST /outbound} waits for an idle channel account
 *     before answering 503
 */
@ConfigurationProperties("example")
public record ExampleProperties(
        @DefaultValue({"1000.00", "500.00"}) List<BigDecimal> demoAccounts,

        @DefaultValue({"channel-1", "channel-2", "channel-3"})
        List<String> channelAccounts,

        @DefaultValue("30s") Duration channelLease,
        @DefaultValue("2s") Duration channelMaxWait) {}

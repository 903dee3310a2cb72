package com.example.orders;

import dev.locksmith.pool.ChannelAccount;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/** The example's gateway: a log line and a made-up reference stand in for the remote call. */
@Component
class SimulatedChannelGateway implements ChannelGateway {

    private static final Logger LOG = LoggerFactory.getLogger(SimulatedChannelGateway.class);

    @Override
    public String call(ChannelAccount account, String message) {
        String reference = "sim-" + UUID.randomUUID();
        LOG.info(
                "called out as {} (lease until {}): '{}' -> {}",
                account.publicKey(),
                account.lockedUntil(),
                message,
                reference);
        return reference;
    }
}

package com.example.orders;

import static com.example.orders.ExampleTables.CALLS_CHANNEL_ACCOUNT;
import static com.example.orders.ExampleTables.CALLS_ID;
import static com.example.orders.ExampleTables.CALLS_MESSAGE;
import static com.example.orders.ExampleTables.CALLS_REFERENCE;
import static com.example.orders.ExampleTables.OUTBOUND_CALLS;

import dev.locksmith.Transactions;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Service;

/**
 * An outbound call made as one of the pool's channel accounts, each of which serves one call at
 * a time: lease an idle account ({@code SKIP LOCKED}: callers never wait on each other's rows),
 * call with no transaction open, then record the call and release the account in one
 * transaction, so the account is idle again exactly when the record commits.
 */
@Service
class OutboundCalls {

    private static final Logger LOG = LoggerFactory.getLogger(OutboundCalls.class);

    private final ChannelAccountPool pool;
    private final Transactions transactions;
    private final ChannelGateway gateway;
    private final ExampleProperties properties;

    OutboundCalls(
            ChannelAccountPool pool, Transactions transactions, ChannelGateway gateway, ExampleProperties properties) {
        this.pool = pool;
        this.transactions = transactions;
        this.gateway = gateway;
        this.properties = properties;
    }

    /**
     * Makes the call on an idle channel account, waiting up to {@code example.channel-max-wait}
     * for one.
     *
     * @param message what to send
     * @return the recorded call
     * @throws NoIdleChannelAccountException when no account became idle in time
     * @throws OutboundCallFailedException when the gateway failed; the account is released
     */
    OutboundCall call(String message) {
        // Unique per call: release checks it, so only this call can release its lease.
        String owner = "outbound-" + UUID.randomUUID();
        ChannelAccount account = pool.acquire(properties.channelLease(), owner, properties.channelMaxWait())
                .orElseThrow(() -> new NoIdleChannelAccountException(properties.channelMaxWait()));
        String reference;
        try {
            reference = gateway.call(account, message);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            releaseAfterFailure(account, owner, e);
            throw new OutboundCallFailedException(account.publicKey(), e);
        }
        // If this transaction fails, the account stays leased until its lease lapses
        // (example.channel-lease), and is then idle for the next caller.
        return transactions.run(tx -> {
            long id = tx.dsl()
                    .insertInto(OUTBOUND_CALLS, CALLS_CHANNEL_ACCOUNT, CALLS_MESSAGE, CALLS_REFERENCE)
                    .values(account.publicKey(), message, reference)
                    .returningResult(CALLS_ID)
                    .fetchSingle()
                    .value1();
            pool.release(tx.dsl(), account.publicKey(), owner);
            return new OutboundCall(id, account.publicKey(), owner, account.lockedUntil(), reference);
        });
    }

    private void releaseAfterFailure(ChannelAccount account, String owner, Exception failure) {
        try {
            transactions.run(tx -> {
                pool.release(tx.dsl(), account.publicKey(), owner);
                return null;
            });
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
            LOG.warn("could not release {} after a failed call; its lease lapses on its own", account.publicKey(), e);
        }
    }

    /**
     * A call made and recorded.
     *
     * @param id the call's id in {@code outbound_calls}
     * @param channelAccount the account it was made as
     * @param leaseOwner who held the account's lease during the call
     * @param leasedUntil when the lease would have lapsed had the call not released it
     * @param reference the other side's reference
     */
    record OutboundCall(
            long id, String channelAccount, String leaseOwner, OffsetDateTime leasedUntil, String reference) {}

    /** No channel account became idle within {@code example.channel-max-wait}: answered 503. */
    static final class NoIdleChannelAccountException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NoIdleChannelAccountException(Duration waited) {
            super("no channel account became idle within " + waited);
        }
    }

    /** The gateway failed; the account was released. Answered 502. */
    static final class OutboundCallFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        OutboundCallFailedException(String channelAccount, Exception cause) {
            super("the outbound call as " + channelAccount + " failed: " + cause.getMessage(), cause);
        }
    }
}

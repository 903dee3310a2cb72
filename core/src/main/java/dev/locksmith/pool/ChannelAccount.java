package dev.locksmith.pool;

import dev.locksmith.codegen.tables.records.ChannelAccountsRecord;
import java.time.OffsetDateTime;
import java.util.Optional;

/**
 * A pooled account as read or acquired.
 *
 * @param publicKey the account's key
 * @param lockedBy the lease holder, or null when idle
 * @param lockedAt when the current lease was taken
 * @param lockedUntil when the current lease expires (database clock)
 */
public record ChannelAccount(String publicKey, String lockedBy, OffsetDateTime lockedAt, OffsetDateTime lockedUntil) {

    /** The lease holder, if leased (it may have expired; compare {@link #lockedUntil()}). */
    public Optional<String> holder() {
        return Optional.ofNullable(lockedBy);
    }

    static ChannelAccount from(ChannelAccountsRecord r) {
        return new ChannelAccount(r.getPublicKey(), r.getLockedBy(), r.getLockedAt(), r.getLockedUntil());
    }
}

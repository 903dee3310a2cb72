package dev.locksmith.pool;

import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A pooled account as read or acquired.
 *
 * @param publicKey the account's key
 * @param lockedBy the lease holder, or null when idle (never leased, released, or cleared by
 *     {@link ChannelAccountPool#expireLeases()})
 * @param lockedAt when the current lease was taken; null when idle
 * @param lockedUntil when the current lease expires (database clock); null when idle
 * @param fence the lease's fencing token: a number from the sequence {@code channel_account_fence},
 *     so the holder of a lease holds a number larger than any earlier holder of the account held;
 *     write it beside what the lease protects and refuse a smaller one
 *     ({@link dev.locksmith.Fencing}), so that a holder whose lease lapsed (a long GC pause) and
 *     was taken by another cannot overwrite the newer holder's work. It grows per account, but by
 *     more than one between leases (the sequence is shared by every account); of an account read
 *     by {@link ChannelAccountPool#find} it is the latest lease's, expired or not, and 0 once the
 *     account is idle again (its lease released or dropped)
 */
public record ChannelAccount(
        String publicKey,
        @Nullable String lockedBy,
        @Nullable OffsetDateTime lockedAt,
        @Nullable OffsetDateTime lockedUntil,
        long fence) {

    /**
     * The public key is always there; the lease columns are null while the account is idle.
     *
     * @param publicKey the account's key; not null
     * @param lockedBy the lease holder, or null while idle
     * @param lockedAt when the lease was taken, or null
     * @param lockedUntil when the lease expires, or null
     * @param fence the lease's fencing token, 0 while idle
     * @throws NullPointerException when the public key is null
     * @throws IllegalArgumentException when {@code fence} is negative
     */
    public ChannelAccount {
        Objects.requireNonNull(publicKey, "publicKey");
        if (fence < 0) {
            throw new IllegalArgumentException("fence must be 0 or more, was " + fence);
        }
    }

    /**
     * The lease holder, if leased.
     *
     * @return the owner of the lease; the lease may have expired since (compare
     *     {@link #lockedUntil()} with the database clock)
     */
    public Optional<String> holder() {
        return Optional.ofNullable(lockedBy);
    }
}

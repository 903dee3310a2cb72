package dev.locksmith.pool;

import dev.locksmith.exception.LocksmithException;
import org.jspecify.annotations.Nullable;

/**
 * A release or extension by someone who does not hold an unexpired lease on the account: it was
 * never theirs, it expired, or it expired and someone else acquired it. Nothing was changed;
 * thrown inside the caller's transaction so that, unless caught, the caller's writes roll back
 * too.
 */
public final class LeaseNotHeldException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** The channel account. */
    private final String publicKey;
    /** The owner that tried. */
    private final String owner;

    LeaseNotHeldException(String publicKey, String owner, @Nullable String currentHolder) {
        super(owner + " does not hold an unexpired lease on " + publicKey
                + (currentHolder == null ? " (it is idle)" : " (held by " + currentHolder + ")"));
        this.publicKey = publicKey;
        this.owner = owner;
    }

    /** {@return the channel account's public key} */
    public String publicKey() {
        return publicKey;
    }

    /** {@return the owner that tried, as it passed itself} */
    public String owner() {
        return owner;
    }
}

package dev.locksmith.pool;

import dev.locksmith.LocksmithException;

/**
 * A release or extension by someone who does not hold an unexpired lease on the account: it was
 * never theirs, it expired, or it expired and someone else acquired it. Nothing was changed;
 * thrown inside the caller's transaction so that, unless caught, the caller's writes roll back
 * too.
 */
public final class LeaseNotHeldException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    private final String publicKey;
    private final String owner;

    LeaseNotHeldException(String publicKey, String owner, String currentHolder) {
        super(owner + " does not hold an unexpired lease on " + publicKey
                + (currentHolder == null ? " (it is idle)" : " (held by " + currentHolder + ")"));
        this.publicKey = publicKey;
        this.owner = owner;
    }

    /** The account. */
    public String publicKey() {
        return publicKey;
    }

    /** Who tried. */
    public String owner() {
        return owner;
    }
}

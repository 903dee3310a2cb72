package dev.locksmith.pool;

import dev.locksmith.LocksmithException;

/** No channel account has the given key. */
public final class ChannelAccountNotFoundException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    private final String publicKey;

    ChannelAccountNotFoundException(String publicKey) {
        super("no channel account " + publicKey);
        this.publicKey = publicKey;
    }

    /** The key that was looked for. */
    public String publicKey() {
        return publicKey;
    }
}

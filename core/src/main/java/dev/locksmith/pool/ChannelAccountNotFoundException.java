package dev.locksmith.pool;

import dev.locksmith.exception.LocksmithException;

/** No channel account has the given key. */
public final class ChannelAccountNotFoundException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** The key that was looked for. */
    private final String publicKey;

    ChannelAccountNotFoundException(String publicKey) {
        super("no channel account " + publicKey);
        this.publicKey = publicKey;
    }

    /** {@return the key that was looked for} */
    public String publicKey() {
        return publicKey;
    }
}

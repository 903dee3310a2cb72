package dev.locksmith.audit;

import java.util.Optional;
import java.util.UUID;

/** Reads and writes the transaction UUID locksmith puts in {@code application_name}. */
final class TxnTag {

    /** Prefix of a tagged {@code application_name}; the UUID follows. */
    static final String PREFIX = "locksmith:";

    private TxnTag() {}

    static String applicationName(UUID txnId) {
        return PREFIX + txnId;
    }

    /** The UUID in {@code applicationName}, if it is a locksmith tag. */
    static Optional<UUID> parse(String applicationName) {
        if (applicationName == null || !applicationName.startsWith(PREFIX)) {
            return Optional.empty();
        }
        try {
            return Optional.of(UUID.fromString(applicationName.substring(PREFIX.length())));
        } catch (IllegalArgumentException notOurs) {
            return Optional.empty();
        }
    }
}

package dev.locksmith.advisory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;

/**
 * An advisory lock key: a namespace and a business key, mapped to PostgreSQL's two-int form
 * {@code (classid, objid)} by a hash computed in Java. The mapping is part of the public
 * contract and will not change:
 *
 * <ul>
 *   <li>{@code classId} = the first 4 bytes, big-endian, of SHA-256 of the namespace's UTF-8
 *       bytes;</li>
 *   <li>{@code objId} = the first 4 bytes, big-endian, of SHA-256 of the business key: its UTF-8
 *       bytes for a string key, its 8 big-endian bytes for a long key.</li>
 * </ul>
 *
 * <p>Why not {@code hashtext()}: it is internal to PostgreSQL, undocumented, and has changed
 * between major versions; a key must hash the same in every service and every server version.
 *
 * <p>Collisions: two different business keys of a namespace share a lock with probability
 * 2^-32 per pair (about 1% once 9,300 distinct keys are locked at the same moment). A collision
 * only makes unrelated work wait (or a {@code try} fail) needlessly; it never lets two holders
 * of the same key in. Namespaces collide likewise, and the two-int form never collides with
 * locks taken through the single-bigint functions.
 *
 * @param namespace what kind of thing is locked, e.g. {@code "invoices"}
 * @param businessKey the key as text (a long key is shown in decimal)
 * @param classId first int of the lock
 * @param objId second int of the lock
 */
public record AdvisoryKey(String namespace, String businessKey, int classId, int objId) {

    public AdvisoryKey {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(businessKey, "businessKey");
    }

    /** The key for a string business key. */
    public static AdvisoryKey of(String namespace, String businessKey) {
        requireNotBlank("namespace", namespace);
        requireNotBlank("businessKey", businessKey);
        return new AdvisoryKey(namespace, businessKey, hash(namespace.getBytes(StandardCharsets.UTF_8)),
                hash(businessKey.getBytes(StandardCharsets.UTF_8)));
    }

    /** The key for a numeric business key. */
    public static AdvisoryKey of(String namespace, long businessKey) {
        requireNotBlank("namespace", namespace);
        return new AdvisoryKey(namespace, Long.toString(businessKey), hash(namespace.getBytes(StandardCharsets.UTF_8)),
                hash(ByteBuffer.allocate(Long.BYTES).putLong(businessKey).array()));
    }

    static int hash(byte[] bytes) {
        try {
            return ByteBuffer.wrap(MessageDigest.getInstance("SHA-256").digest(bytes)).getInt();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private static void requireNotBlank(String what, String value) {
        Objects.requireNonNull(value, what);
        if (value.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
    }

    @Override
    public String toString() {
        return namespace + ":" + businessKey + " (" + classId + ", " + objId + ")";
    }
}

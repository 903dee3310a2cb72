package dev.locksmith.advisory;

import dev.locksmith.internal.Texts;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

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
 * <p>Only the two factories make keys, so a key always agrees with its mapping. Equal keys
 * (same namespace, same business key of the same type) lock the same thing. Immutable.
 */
public final class AdvisoryKey {

    private final String namespace;
    private final String businessKey;
    private final boolean numeric;
    private final int classId;
    private final int objId;

    private AdvisoryKey(String namespace, String businessKey, boolean numeric, int classId, int objId) {
        this.namespace = namespace;
        this.businessKey = businessKey;
        this.numeric = numeric;
        this.classId = classId;
        this.objId = objId;
    }

    /**
     * The key for a string business key.
     *
     * @param namespace what kind of thing is locked, e.g. {@code "invoices"}; not blank
     * @param businessKey which one; not blank
     * @return the key
     */
    public static AdvisoryKey of(String namespace, String businessKey) {
        requireNotBlank("namespace", namespace);
        requireNotBlank("businessKey", businessKey);
        return new AdvisoryKey(
                namespace,
                businessKey,
                false,
                hash(namespace.getBytes(StandardCharsets.UTF_8)),
                hash(businessKey.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * The key for a numeric business key.
     *
     * @param namespace what kind of thing is locked, e.g. {@code "invoices"}; not blank
     * @param businessKey which one
     * @return the key
     */
    public static AdvisoryKey of(String namespace, long businessKey) {
        requireNotBlank("namespace", namespace);
        return new AdvisoryKey(
                namespace,
                Long.toString(businessKey),
                true,
                hash(namespace.getBytes(StandardCharsets.UTF_8)),
                hash(ByteBuffer.allocate(Long.BYTES).putLong(businessKey).array()));
    }

    /**
     * What kind of thing is locked.
     *
     * @return the namespace
     */
    public String namespace() {
        return namespace;
    }

    /**
     * The business key as text (a numeric key in decimal).
     *
     * @return the key
     */
    public String businessKey() {
        return businessKey;
    }

    /**
     * The first int of the lock: derived from the namespace as the class describes.
     *
     * @return {@code classid}
     */
    public int classId() {
        return classId;
    }

    /**
     * The second int of the lock: derived from the business key as the class describes.
     *
     * @return {@code objid}
     */
    public int objId() {
        return objId;
    }

    @Override
    public boolean equals(@Nullable Object other) {
        return other instanceof AdvisoryKey k
                && numeric == k.numeric
                && namespace.equals(k.namespace)
                && businessKey.equals(k.businessKey);
    }

    @Override
    public int hashCode() {
        return Objects.hash(namespace, businessKey, numeric);
    }

    static int hash(byte[] bytes) {
        try {
            return ByteBuffer.wrap(MessageDigest.getInstance("SHA-256").digest(bytes))
                    .getInt();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private static void requireNotBlank(String what, String value) {
        Objects.requireNonNull(value, what);
        if (value.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
        // An unpaired surrogate hashes as '?' (getBytes): two keys would share one lock.
        Texts.requireStorable(what, value);
    }

    @Override
    public String toString() {
        return namespace + ":" + businessKey + " (" + classId + ", " + objId + ")";
    }
}

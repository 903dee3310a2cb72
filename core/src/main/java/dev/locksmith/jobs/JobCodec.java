package dev.locksmith.jobs;

/**
 * Turns typed payloads into the JSON text stored in {@code jobs.payload} ({@code jsonb}) and back.
 * The default, {@link #standard()}, is {@link JacksonJobCodec} when Jackson is on the class path.
 * A codec must be thread-safe; the same codec (or a compatible one) must be used where jobs are
 * enqueued ({@link JobQueueConfig.Builder#codec}) and where they are handled
 * ({@link JobHandlers.Builder#codec}).
 */
public interface JobCodec {

    /**
     * Encodes a payload.
     *
     * @param payload the payload; not null
     * @return JSON text PostgreSQL accepts as {@code jsonb}
     * @throws RuntimeException when the payload cannot be encoded (it is reported to the caller of
     *     the enqueue, and nothing is written)
     */
    String encode(Object payload);

    /**
     * Decodes a payload.
     *
     * @param json the stored payload, as PostgreSQL renders {@code jsonb}
     * @param type the class to decode to
     * @param <T> the payload type
     * @return the payload; not null
     * @throws RuntimeException when {@code json} does not decode to {@code type} (the job then fails
     *     permanently with the reason in {@code last_error}, see {@link JobHandlers})
     */
    <T> T decode(String json, Class<T> type);

    /**
     * The default codec: {@link JacksonJobCodec#standard()} when {@code jackson-databind} is on the
     * class path, else a codec that refuses every call and says how to fix it.
     *
     * @return the default codec
     */
    static JobCodec standard() {
        return Codecs.STANDARD;
    }
}

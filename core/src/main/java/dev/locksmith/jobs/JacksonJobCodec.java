package dev.locksmith.jobs;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.Objects;

/**
 * A {@link JobCodec} on Jackson 2 ({@code jackson-databind}, an optional dependency of
 * locksmith-core). Records, nested objects, collections and enums work as Jackson maps them.
 *
 * <p>{@link #standard()} writes {@code java.time} values as ISO-8601 strings (when
 * {@code jackson-datatype-jsr310} is on the class path) and ignores properties it does not know
 * when decoding, so that a producer deployed with a new payload field does not break consumers
 * still on the old class during a rolling deployment. {@link #of(ObjectMapper)} uses an
 * application's own mapper as it is (Spring Boot's, for instance).
 */
public final class JacksonJobCodec implements JobCodec {

    private final ObjectMapper mapper;

    private JacksonJobCodec(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    /**
     * A codec on a mapper configured as the class describes.
     *
     * @return a new codec
     */
    public static JacksonJobCodec standard() {
        JsonMapper.Builder builder = JsonMapper.builder()
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .disable(DeserializationFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE);
        try {
            builder.addModule(JavaTime.module());
        } catch (LinkageError jsr310Missing) {
            // java.time values then fail to encode, with Jackson's message naming the module to add
        }
        return new JacksonJobCodec(builder.build());
    }

    /**
     * Creates the {@code java.time} module in a class of its own, so that verifying the codec
     * never loads {@code JavaTimeModule}: without jackson-datatype-jsr310, only this call fails.
     */
    private static final class JavaTime {
        static com.fasterxml.jackson.databind.Module module() {
            return new com.fasterxml.jackson.datatype.jsr310.JavaTimeModule();
        }
    }

    /**
     * A codec on an application's mapper, used as it is configured.
     *
     * @param mapper the mapper; it must be thread-safe as configured (Jackson's are)
     * @return a new codec
     */
    @SuppressWarnings("exports") // Jackson is optional: a caller of this method has it
    public static JacksonJobCodec of(ObjectMapper mapper) {
        return new JacksonJobCodec(Objects.requireNonNull(mapper, "mapper"));
    }

    @Override
    public String encode(Object payload) {
        Objects.requireNonNull(payload, "payload");
        try {
            return mapper.writeValueAsString(payload);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(
                    "could not encode a " + payload.getClass().getName() + " as JSON: " + e.getOriginalMessage(), e);
        }
    }

    @Override
    public <T> T decode(String json, Class<T> type) {
        Objects.requireNonNull(json, "json");
        Objects.requireNonNull(type, "type");
        T value;
        try {
            value = mapper.readValue(json, type);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a " + type.getName() + ": " + e.getOriginalMessage(), e);
        }
        if (value == null) {
            throw new IllegalArgumentException("not a " + type.getName() + ": the payload is JSON null");
        }
        return value;
    }

    @Override
    public String toString() {
        return "JacksonJobCodec";
    }
}

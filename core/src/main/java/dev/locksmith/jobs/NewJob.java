package dev.locksmith.jobs;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jooq.tools.json.JSONParser;
import org.jooq.tools.json.ParseException;

/**
 * A job to enqueue; immutable, validated when built, so a bad job fails before anything is
 * written.
 *
 * <pre>{@code
 * NewJob job = NewJob.builder("emails", "welcome")
 *         .payload("{\"user\": 42}")
 *         .priority(10)
 *         .delay(Duration.ofMinutes(5))
 *         .uniqueKey("welcome-42")
 *         .build();
 * }</pre>
 *
 * @param queue queue name, 1 to 128 characters, not blank
 * @param kind kind of work, 1 to 128 characters, not blank
 * @param payload JSON text (default {@code {}})
 * @param priority {@link #MIN_PRIORITY} (claimed first) to {@link #MAX_PRIORITY}; default 100
 * @param delay how long after enqueueing (database clock) it becomes claimable; default zero
 * @param maxAttempts leased-mode attempts before it fails permanently; default 25
 * @param shard shard number, zero or more; default 0
 * @param uniqueKey while a job with this key is pending or running in the same queue, enqueueing
 *     another is a no-op that returns the existing job's id
 */
public record NewJob(String queue, String kind, String payload, int priority, Duration delay, int maxAttempts,
        int shard, Optional<String> uniqueKey) {

    /** Highest priority (claimed first). */
    public static final int MIN_PRIORITY = 0;
    /** Lowest priority. */
    public static final int MAX_PRIORITY = 1000;
    /** Priority when none is given. */
    public static final int DEFAULT_PRIORITY = 100;
    /** Attempts when none is given. */
    public static final int DEFAULT_MAX_ATTEMPTS = 25;

    public NewJob {
        requireName("queue", queue, 128);
        requireName("kind", kind, 128);
        Objects.requireNonNull(payload, "payload");
        requireJson(payload);
        if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
            throw new IllegalArgumentException("priority must be between " + MIN_PRIORITY + " and " + MAX_PRIORITY
                    + ", was " + priority);
        }
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative, was " + delay);
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
        }
        if (shard < 0) {
            throw new IllegalArgumentException("shard must not be negative, was " + shard);
        }
        Objects.requireNonNull(uniqueKey, "uniqueKey");
        uniqueKey.ifPresent(key -> requireName("uniqueKey", key, 256));
    }

    /** A job of {@code kind} on {@code queue} with every other field at its default. */
    public static NewJob of(String queue, String kind) {
        return builder(queue, kind).build();
    }

    /** A builder with every optional field at its default. */
    public static Builder builder(String queue, String kind) {
        return new Builder(queue, kind);
    }

    static void requireName(String what, String value, int maxLength) {
        Objects.requireNonNull(value, what);
        if (value.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
        if (value.length() > maxLength) {
            throw new IllegalArgumentException(what + " must be at most " + maxLength + " characters, was "
                    + value.length());
        }
    }

    private static void requireJson(String payload) {
        try {
            new JSONParser().parse(payload);
        } catch (ParseException | RuntimeException e) {
            throw new IllegalArgumentException("payload is not valid JSON: " + e.getMessage(), e);
        }
    }

    /** Builds a {@link NewJob}; validation happens in {@link #build()}. */
    public static final class Builder {
        private final String queue;
        private final String kind;
        private String payload = "{}";
        private int priority = DEFAULT_PRIORITY;
        private Duration delay = Duration.ZERO;
        private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
        private int shard;
        private String uniqueKey;

        private Builder(String queue, String kind) {
            this.queue = queue;
            this.kind = kind;
        }

        /** JSON payload text. */
        public Builder payload(String json) {
            this.payload = json;
            return this;
        }

        /** {@link #MIN_PRIORITY} (first) to {@link #MAX_PRIORITY}. */
        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        /** Not claimable until this long after enqueueing (database clock). */
        public Builder delay(Duration delay) {
            this.delay = delay;
            return this;
        }

        /** Leased-mode attempts before failing permanently. */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** Shard number, for deployments that split a hot queue. */
        public Builder shard(int shard) {
            this.shard = shard;
            return this;
        }

        /** De-duplication key among live (pending or running) jobs of the queue. */
        public Builder uniqueKey(String uniqueKey) {
            this.uniqueKey = uniqueKey;
            return this;
        }

        /** The job; throws if any field is invalid. */
        public NewJob build() {
            return new NewJob(queue, kind, payload, priority, delay, maxAttempts, shard, Optional.ofNullable(uniqueKey));
        }
    }
}

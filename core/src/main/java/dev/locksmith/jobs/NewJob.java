package dev.locksmith.jobs;

import dev.locksmith.internal.JsonText;
import dev.locksmith.internal.Texts;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

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
 *         .orderingKey("user-42")
 *         .build();
 * }</pre>
 *
 * @param queue queue name, 1 to 128 characters, not blank
 * @param kind kind of work, 1 to 128 characters, not blank
 * @param payload JSON text (default {@code {}}): exactly one JSON value that PostgreSQL accepts as
 *     {@code jsonb} (RFC 8259, no {@code \u0000}, numbers within {@code numeric}'s range), at most
 *     {@link #MAX_PAYLOAD_BYTES} bytes of UTF-8; checked here, so a bad payload never reaches the
 *     database (where it would abort the caller's transaction)
 * @param priority {@link #MIN_PRIORITY} (claimed first) to {@link #MAX_PRIORITY}; default 100
 * @param delay how long after the enqueueing statement (database clock, {@code statement_timestamp()},
 *     not the start of the caller's transaction) it becomes claimable; zero to {@link #MAX_DELAY},
 *     default zero
 * @param maxAttempts attempts (claims, in every worker mode) before it fails permanently; default 25
 * @param shard shard number, zero or more; default 0
 * @param uniqueKey while a job with this key is pending or running in the same queue, enqueueing
 *     another is a no-op that returns the existing job's id
 * @param orderingKey jobs of the queue with the same ordering key run one at a time, in the order
 *     they were enqueued (see {@link Builder#orderingKey(String)} and {@link JobQueue}); empty
 *     (the default) for a job that runs in parallel with any other
 * @param concurrencyKey jobs of the queue with the same concurrency key run at most N at a time,
 *     N being the key's limit ({@link Builder#concurrencyKey(String)}, {@link ConcurrencyLimits});
 *     empty (the default) for a job no limit counts
 */
public record NewJob(
        String queue,
        String kind,
        String payload,
        int priority,
        Duration delay,
        int maxAttempts,
        int shard,
        Optional<String> uniqueKey,
        Optional<String> orderingKey,
        Optional<String> concurrencyKey) {

    /** Highest priority (claimed first). */
    public static final int MIN_PRIORITY = 0;
    /** Lowest priority. */
    public static final int MAX_PRIORITY = 1000;
    /** Priority when none is given. */
    public static final int DEFAULT_PRIORITY = 100;
    /** Attempts when none is given. */
    public static final int DEFAULT_MAX_ATTEMPTS = 25;
    /**
     * Largest payload: 1 MiB of UTF-8. Queue rows are rewritten on every claim and completion;
     * keep large documents elsewhere and enqueue a reference to them.
     */
    public static final int MAX_PAYLOAD_BYTES = 1 << 20;
    /** Longest delay: 3,650 days. */
    public static final Duration MAX_DELAY = Duration.ofDays(3650);

    /**
     * Validates every field; see the record's description.
     *
     * @param queue queue name, 1 to 128 characters, not blank
     * @param kind kind of work, 1 to 128 characters, not blank
     * @param payload JSON text PostgreSQL accepts as {@code jsonb}, at most
     *     {@link #MAX_PAYLOAD_BYTES} bytes of UTF-8
     * @param priority {@link #MIN_PRIORITY} to {@link #MAX_PRIORITY}
     * @param delay zero to {@link #MAX_DELAY}
     * @param maxAttempts at least 1
     * @param shard zero or more
     * @param uniqueKey empty, or 1 to 256 characters, not blank
     * @param orderingKey empty, or 1 to 256 characters, not blank
     * @param concurrencyKey empty, or 1 to 256 characters, not blank
     * @throws IllegalArgumentException naming the invalid field (for the payload, also the
     *     problem and its offset)
     * @throws NullPointerException when a field is null
     */
    public NewJob {
        requireName("queue", queue, 128);
        requireName("kind", kind, 128);
        Objects.requireNonNull(payload, "payload");
        JsonText.requireValid("payload", payload, MAX_PAYLOAD_BYTES);
        if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
            throw new IllegalArgumentException(
                    "priority must be between " + MIN_PRIORITY + " and " + MAX_PRIORITY + ", was " + priority);
        }
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative() || delay.compareTo(MAX_DELAY) > 0) {
            throw new IllegalArgumentException("delay must be between zero and " + MAX_DELAY + ", was " + delay);
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
        }
        if (shard < 0) {
            throw new IllegalArgumentException("shard must not be negative, was " + shard);
        }
        Objects.requireNonNull(uniqueKey, "uniqueKey");
        uniqueKey.ifPresent(key -> requireName("uniqueKey", key, 256));
        Objects.requireNonNull(orderingKey, "orderingKey");
        orderingKey.ifPresent(key -> requireName("orderingKey", key, 256));
        Objects.requireNonNull(concurrencyKey, "concurrencyKey");
        concurrencyKey.ifPresent(key -> requireName("concurrencyKey", key, 256));
    }

    /**
     * A job without a concurrency key: the constructor of the fields before
     * {@code concurrencyKey} was added.
     *
     * @param queue queue name, 1 to 128 characters, not blank
     * @param kind kind of work, 1 to 128 characters, not blank
     * @param payload JSON text
     * @param priority {@link #MIN_PRIORITY} to {@link #MAX_PRIORITY}
     * @param delay zero to {@link #MAX_DELAY}
     * @param maxAttempts at least 1
     * @param shard zero or more
     * @param uniqueKey empty, or 1 to 256 characters, not blank
     * @param orderingKey empty, or 1 to 256 characters, not blank
     * @throws IllegalArgumentException naming the invalid field
     */
    public NewJob(
            String queue,
            String kind,
            String payload,
            int priority,
            Duration delay,
            int maxAttempts,
            int shard,
            Optional<String> uniqueKey,
            Optional<String> orderingKey) {
        this(queue, kind, payload, priority, delay, maxAttempts, shard, uniqueKey, orderingKey, Optional.empty());
    }

    /**
     * A job of {@code kind} on {@code queue} with every other field at its default: payload
     * {@code {}}, priority {@value #DEFAULT_PRIORITY}, no delay, {@value #DEFAULT_MAX_ATTEMPTS}
     * attempts, shard 0, no unique key, no ordering key, no concurrency key.
     *
     * @param queue queue name, 1 to 128 characters, not blank
     * @param kind kind of work, 1 to 128 characters, not blank
     * @return the job
     * @throws IllegalArgumentException for an invalid queue or kind
     */
    public static NewJob of(String queue, String kind) {
        return builder(queue, kind).build();
    }

    /**
     * A builder with every optional field at its default (see {@link #of(String, String)}).
     *
     * @param queue queue name, 1 to 128 characters, not blank (checked by {@link Builder#build()})
     * @param kind kind of work, 1 to 128 characters, not blank (checked by {@link Builder#build()})
     * @return a new builder
     */
    public static Builder builder(String queue, String kind) {
        return new Builder(queue, kind);
    }

    static void requireName(String what, String value, int maxLength) {
        Texts.requireName(what, value, maxLength);
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
        private @Nullable String uniqueKey;
        private @Nullable String orderingKey;
        private @Nullable String concurrencyKey;

        private Builder(String queue, String kind) {
            this.queue = queue;
            this.kind = kind;
        }

        /**
         * The payload; default {@code {}}.
         *
         * @param json JSON text PostgreSQL accepts as {@code jsonb}, at most
         *     {@link #MAX_PAYLOAD_BYTES} bytes of UTF-8 (checked by {@link #build()})
         * @return this builder
         */
        public Builder payload(String json) {
            this.payload = json;
            return this;
        }

        /**
         * The priority; default {@value #DEFAULT_PRIORITY}. Lower numbers are claimed first; among
         * equal priorities, the earlier {@code run_at}, then the lower id.
         *
         * @param priority {@link #MIN_PRIORITY} (first) to {@link #MAX_PRIORITY} (checked by
         *     {@link #build()})
         * @return this builder
         */
        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        /**
         * Not claimable until this long after the enqueueing statement (database clock); default
         * zero.
         *
         * @param delay zero to {@link #MAX_DELAY} (checked by {@link #build()})
         * @return this builder
         */
        public Builder delay(Duration delay) {
            this.delay = delay;
            return this;
        }

        /**
         * Attempts before the job fails permanently; default {@value #DEFAULT_MAX_ATTEMPTS}.
         * Counted by leased claims, and by failed attempts in transactional mode.
         *
         * @param maxAttempts at least 1 (checked by {@link #build()})
         * @return this builder
         */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * Shard number, for deployments that split a hot queue among workers
         * ({@link Claim#onShards(java.util.Set)}); default 0.
         *
         * @param shard zero or more (checked by {@link #build()})
         * @return this builder
         */
        public Builder shard(int shard) {
            this.shard = shard;
            return this;
        }

        /**
         * De-duplication key among live (pending or running) jobs of the queue; default none.
         *
         * @param uniqueKey 1 to 256 characters, not blank (checked by {@link #build()})
         * @return this builder
         */
        public Builder uniqueKey(String uniqueKey) {
            this.uniqueKey = uniqueKey;
            return this;
        }

        /**
         * Serial execution by key; default none. Jobs of this queue with the same ordering key
         * (a customer, an account, a document) run one at a time, in the order they were
         * enqueued, across every worker and both claim modes, while jobs of other keys (and jobs
         * without one) run in parallel. A job is claimed only when no pending or running job of
         * its key was enqueued before it: a job that failed and waits for its retry keeps the
         * jobs after it waiting; one that failed for good or was cancelled lets them go. Within
         * a key, priority and delay do not reorder jobs: a later job with a higher priority
         * still waits, and a delayed job holds back the jobs after it until it is due. Producers
         * of one key are serialized (see {@link JobQueue#enqueueAll}).
         *
         * @param orderingKey 1 to 256 characters, not blank (checked by {@link #build()})
         * @return this builder
         */
        public Builder orderingKey(String orderingKey) {
            this.orderingKey = orderingKey;
            return this;
        }

        /**
         * The key whose running jobs a limit counts; default none. At no instant do more jobs of
         * this queue and key run than the key's limit (its own, else the queue's default per key:
         * {@link JobQueue#concurrencyLimits()}), counted across every JVM, in both claim modes: a
         * leased job from its claim until it is settled (or its lapsed lease is rescued), a job
         * of a transactional claim while the claiming transaction is open. The limit is enforced
         * inside the claim: a job of a key at its limit stays pending, its attempt not counted,
         * and the queue's other keys are claimed meanwhile, in turn (see
         * {@link ConcurrencyLimits}). A key without a limit, or a queue without any, claims its
         * jobs as if they had none.
         *
         * @param concurrencyKey 1 to 256 characters, not blank (checked by {@link #build()})
         * @return this builder
         */
        public Builder concurrencyKey(String concurrencyKey) {
            this.concurrencyKey = concurrencyKey;
            return this;
        }

        /**
         * The job.
         *
         * @return the validated job
         * @throws IllegalArgumentException naming the first invalid field
         */
        public NewJob build() {
            return new NewJob(
                    queue,
                    kind,
                    payload,
                    priority,
                    delay,
                    maxAttempts,
                    shard,
                    Optional.ofNullable(uniqueKey),
                    Optional.ofNullable(orderingKey),
                    Optional.ofNullable(concurrencyKey));
        }
    }
}

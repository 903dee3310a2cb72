package dev.locksmith.spring;

import dev.locksmith.ExecutionMode;
import dev.locksmith.PoolingMode;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.RateLimits;
import dev.locksmith.schema.SchemaModule;
import dev.locksmith.schema.SchemaName;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The locksmith.* properties. Every value is checked when the properties are bound, and a
 * wrong one fails start-up with a message that names the property, such as
 * locksmith.queues.emails.threads must be between 1 and 1000, was -1.
 *
 * @param schema where locksmith's tables live and whether the starter migrates them
 *     (locksmith.schema.*)
 * @param poolingMode how the data source's connections reach PostgreSQL (locksmith.pooling-mode):
 *     session (the default: directly, or through a pool or PgBouncer in session mode) or
 *     transaction (PgBouncer in transaction mode: session advisory locks and LISTEN are refused,
 *     so set locksmith.queues.NAME.listen=false)
 * @param executionMode how the repositories execute their hot statements
 *     (locksmith.execution-mode): jooq (the default: through Boot's jOOQ configuration and its
 *     listeners) or raw_jdbc
 * @param workers whether this instance runs workers (locksmith.workers.*)
 * @param queues settings per queue, by queue name (locksmith.queues.NAME.*); a queue
 *     with a handler and no entry here gets the defaults
 * @param retention deletion of finished jobs (locksmith.retention.*)
 * @param audit the lock audit's settings (locksmith.audit.*)
 * @param health the health indicator's thresholds (locksmith.health.*)
 * @param horizon the workers' watch on the MVCC horizon (locksmith.horizon.*)
 * @param metrics the gauges' settings (locksmith.metrics.*)
 */
@ConfigurationProperties(prefix = "locksmith")
public record LocksmithProperties(
        @DefaultValue Schema schema,
        @DefaultValue("session") PoolingMode poolingMode,
        @DefaultValue("jooq") ExecutionMode executionMode,
        @DefaultValue Workers workers,
        @DefaultValue Map<String, Queue> queues,
        @DefaultValue Retention retention,
        @DefaultValue Audit audit,
        @DefaultValue Health health,
        @DefaultValue Horizon horizon,
        @DefaultValue Metrics metrics) {

    /** Longest queue name, as JobQueue allows. */
    static final int MAX_QUEUE_NAME = 128;

    /**
     * Checks every value, naming the property of the first wrong one.
     *
     * @param schema locksmith.schema.*
     * @param poolingMode locksmith.pooling-mode
     * @param executionMode locksmith.execution-mode
     * @param workers locksmith.workers.*
     * @param queues locksmith.queues.NAME.*
     * @param retention locksmith.retention.*
     * @param audit locksmith.audit.*
     * @param health locksmith.health.*
     * @param horizon locksmith.horizon.*
     * @param metrics locksmith.metrics.*
     * @throws IllegalArgumentException naming the property, for a value out of range
     */
    public LocksmithProperties {
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(poolingMode, "poolingMode");
        Objects.requireNonNull(executionMode, "executionMode");
        Objects.requireNonNull(workers, "workers");
        Objects.requireNonNull(retention, "retention");
        Objects.requireNonNull(audit, "audit");
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(horizon, "horizon");
        Objects.requireNonNull(metrics, "metrics");
        queues = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(queues, "queues")));
        for (Map.Entry<String, Queue> entry : queues.entrySet()) {
            requireQueueName("locksmith.queues." + entry.getKey(), entry.getKey());
            entry.getValue().check("locksmith.queues." + entry.getKey());
        }
        if (health.maxPending() != null && health.maxPending() > health.depthCap()) {
            throw new IllegalArgumentException(
                    "locksmith.health.max-pending must not exceed locksmith.health.depth-cap ("
                            + health.depthCap() + "), since pending jobs are counted only up to it; was "
                            + health.maxPending());
        }
    }

    /**
     * The settings of queue: its entry under locksmith.queues, or the defaults.
     *
     * @param queue a queue name
     * @return the queue's settings
     */
    public Queue queue(String queue) {
        Queue configured = queues.get(queue);
        return configured != null ? configured : Queue.DEFAULTS;
    }

    static void requireQueueName(String property, String queue) {
        if (queue.isBlank() || queue.length() > MAX_QUEUE_NAME) {
            throw new IllegalArgumentException(property + ": a queue name must be 1 to " + MAX_QUEUE_NAME
                    + " characters and not blank, was '" + queue + "'");
        }
    }

    private static void requirePositive(String property, Duration value) {
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(property + " must be positive, was " + value);
        }
    }

    private static void requireRange(String property, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(property + " must be between " + min + " and " + max + ", was " + value);
        }
    }

    /**
     * Where locksmith's tables live (locksmith.schema.*).
     *
     * @param name the PostgreSQL schema of locksmith's tables; a lower-case unquoted identifier
     * @param migrate whether the starter applies the changelog at start-up, before any worker
     *     starts; false when your pipeline or Spring Boot's own Liquibase applies it
     * @param modules the schema modules to apply (and that the health indicator looks at):
     *     queue, pool, accounts, audit
     */
    public record Schema(
            @DefaultValue(SchemaName.DEFAULT) String name,
            @DefaultValue("true") boolean migrate,

            @DefaultValue({"queue", "pool", "accounts", "audit"})
            Set<SchemaModule> modules) {

        /**
         * Checks the values.
         *
         * @param name locksmith.schema.name
         * @param migrate locksmith.schema.migrate
         * @param modules locksmith.schema.modules
         * @throws IllegalArgumentException naming the property
         */
        public Schema {
            try {
                SchemaName.require(Objects.requireNonNull(name, "name"));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("locksmith.schema.name: " + e.getMessage(), e);
            }
            if (modules.isEmpty()) {
                throw new IllegalArgumentException("locksmith.schema.modules must name at least one module of "
                        + EnumSet.allOf(SchemaModule.class));
            }
            modules = Set.copyOf(EnumSet.copyOf(modules));
        }
    }

    /**
     * Whether this instance runs workers (locksmith.workers.*).
     *
     * @param enabled false to run no worker and no retention here (a web-only replica); the
     *     repositories are beans all the same
     */
    public record Workers(@DefaultValue("true") boolean enabled) {}

    /**
     * The settings of one queue's worker (locksmith.queues.NAME.*).
     *
     * @param mode leased (JobWorker) or transactional
     *     (TransactionalWorker); unset: leased for a
     *     JobHandler, transactional for a BatchJobHandler
     * @param threads handler threads, 1 to 1000
     * @param batchSize transactional mode: jobs claimed and handled per transaction, 1 to 10000
     * @param lease leased mode: the lease of each claimed job, extended while its handler runs
     * @param pollInterval the longest wait for new jobs without a notification
     * @param minPollInterval how often the worker polls while jobs arrive when it does not listen
     *     (WorkerBuilder#minPollInterval): backs off to poll-interval once jobs stop
     * @param listen whether the worker listens for NOTIFY (one more connection held);
     *     false behind PgBouncer in transaction pooling mode
     * @param shutdownGrace how long shutdown lets running handlers finish before interrupting
     *     them (and as long again after); keep twice it within
     *     spring.lifecycle.timeout-per-shutdown-phase
     * @param prefetch leased mode: the most jobs claimed ahead of free threads, 0 to 1000
     *     (claimed ahead only for short jobs, see JobWorker.Builder#prefetch); unset: eight per
     *     thread, more while claims are slow
     * @param completionLinger leased mode: how long the completion of a job whose handler wrote
     *     nothing may wait to be batched with others, 0 to 1s
     * @param claimers leased mode: claim statements run side by side, each on a connection of
     *     its own, 1 to 8 (JobWorker.Builder#claimers); for many short jobs with a large prefetch
     * @param vacuumInterval how often the worker checks the jobs table's dead rows and VACUUMs
     *     it when there are 10,000 or more (JobWorker.Builder#vacuumInterval); 0s turns it off,
     *     else 1s to 1h
     * @param concurrencyLimit the most running jobs of one concurrency key of the queue, for
     *     every key without a limit of its own (ConcurrencyLimits#setDefault), 1 to 10000; written
     *     to the database at start-up by the instances that run workers; unset: left as it is there
     * @param concurrencyLimits keys' own limits (ConcurrencyLimits#set), by key, written the same
     *     way; a key with characters other than letters, digits and '-' (a dot, say) goes in brackets:
     *     locksmith.queues.NAME.concurrency-limits.[tenant.7]=16
     * @param rateLimit the most jobs of one concurrency key of the queue started in any window,
     *     for every key without a rate of its own (RateLimits#setDefault):
     *     locksmith.queues.NAME.rate-limit.max-starts=100 and .rate-limit.per=1m; written at
     *     start-up like the concurrency limits; unset: left as it is in the database
     * @param rateLimits keys' own rates (RateLimits#set), by key, written the same way:
     *     locksmith.queues.NAME.rate-limits.[partner.eu].max-starts=5 and .per=1s
     */
    public record Queue(
            @Nullable Mode mode,
            @DefaultValue("4") int threads,
            @DefaultValue("10") int batchSize,
            @DefaultValue("30s") Duration lease,
            @DefaultValue("1s") Duration pollInterval,
            @DefaultValue("20ms") Duration minPollInterval,
            @DefaultValue("true") boolean listen,
            @DefaultValue("10s") Duration shutdownGrace,
            @Nullable Integer prefetch,
            @DefaultValue("0s") Duration completionLinger,
            @DefaultValue("1") int claimers,
            @DefaultValue("5s") Duration vacuumInterval,
            @Nullable Integer concurrencyLimit,
            @DefaultValue Map<String, Integer> concurrencyLimits,
            @Nullable RateLimit rateLimit,
            @DefaultValue Map<String, RateLimit> rateLimits) {

        static final Queue DEFAULTS = new Queue(
                null,
                4,
                10,
                Duration.ofSeconds(30),
                Duration.ofSeconds(1),
                Duration.ofMillis(20),
                true,
                Duration.ofSeconds(10),
                null,
                Duration.ZERO,
                1,
                Duration.ofSeconds(5),
                null,
                Map.of(),
                null,
                Map.of());

        /**
         * Checks that no value is missing; ranges are checked with the queue's name.
         *
         * @param mode mode
         * @param threads threads
         * @param batchSize batch-size
         * @param lease lease
         * @param pollInterval poll-interval
         * @param minPollInterval min-poll-interval
         * @param listen listen
         * @param shutdownGrace shutdown-grace
         * @param prefetch prefetch
         * @param completionLinger completion-linger
         * @param claimers claimers
         * @param vacuumInterval vacuum-interval
         * @param concurrencyLimit concurrency-limit
         * @param concurrencyLimits concurrency-limits
         * @param rateLimit rate-limit
         * @param rateLimits rate-limits
         */
        public Queue {
            Objects.requireNonNull(lease, "lease");
            Objects.requireNonNull(pollInterval, "pollInterval");
            Objects.requireNonNull(minPollInterval, "minPollInterval");
            Objects.requireNonNull(shutdownGrace, "shutdownGrace");
            Objects.requireNonNull(completionLinger, "completionLinger");
            Objects.requireNonNull(vacuumInterval, "vacuumInterval");
            concurrencyLimits = Map.copyOf(Objects.requireNonNull(concurrencyLimits, "concurrencyLimits"));
            rateLimits = Map.copyOf(Objects.requireNonNull(rateLimits, "rateLimits"));
        }

        void check(String prefix) {
            requireRange(prefix + ".threads", threads, 1, 1000);
            requireRange(prefix + ".batch-size", batchSize, 1, Claim.MAX_LIMIT);
            requirePositive(prefix + ".lease", lease);
            requirePositive(prefix + ".poll-interval", pollInterval);
            requirePositive(prefix + ".min-poll-interval", minPollInterval);
            requirePositive(prefix + ".shutdown-grace", shutdownGrace);
            if (prefetch != null) {
                requireRange(prefix + ".prefetch", prefetch, 0, 1000);
            }
            requireRange(prefix + ".claimers", claimers, 1, JobWorker.MAX_CLAIMERS);
            if (concurrencyLimit != null) {
                requireRange(prefix + ".concurrency-limit", concurrencyLimit, 1, ConcurrencyLimits.MAX);
            }
            concurrencyLimits.forEach((key, limit) -> {
                requireKey(prefix + ".concurrency-limits", key);
                requireRange(prefix + ".concurrency-limits." + key, limit, 1, ConcurrencyLimits.MAX);
            });
            if (rateLimit != null) {
                rateLimit.check(prefix + ".rate-limit");
            }
            rateLimits.forEach((key, rate) -> {
                requireKey(prefix + ".rate-limits", key);
                rate.check(prefix + ".rate-limits." + key);
            });
            if (completionLinger.isNegative() || completionLinger.compareTo(Duration.ofSeconds(1)) > 0) {
                throw new IllegalArgumentException(
                        prefix + ".completion-linger must be between 0 and 1s, was " + completionLinger);
            }
            if (!vacuumInterval.isZero()
                    && (vacuumInterval.compareTo(Duration.ofSeconds(1)) < 0
                            || vacuumInterval.compareTo(Duration.ofHours(1)) > 0)) {
                throw new IllegalArgumentException(
                        prefix + ".vacuum-interval must be 0s (off) or between 1s and 1h, was " + vacuumInterval);
            }
        }

        private static void requireKey(String property, String key) {
            if (key.isBlank() || key.length() > 256) {
                throw new IllegalArgumentException(
                        property + ": a key must be 1 to 256 characters and not blank, was '" + key + "'");
            }
        }

        /**
         * A rate of starts per concurrency key (RateLimits): at most {@code maxStarts} jobs of a
         * key started in any window of length {@code per}.
         *
         * @param maxStarts 1 to 10000 (max-starts); both must be set
         * @param per the window, 1ms to 1d, in whole microseconds
         */
        public record RateLimit(
                @Nullable Integer maxStarts, @Nullable Duration per) {

            void check(String prefix) {
                if (maxStarts == null || per == null) {
                    throw new IllegalArgumentException(
                            prefix + " needs both max-starts and per, was max-starts=" + maxStarts + " per=" + per);
                }
                requireRange(prefix + ".max-starts", maxStarts, 1, RateLimits.MAX_STARTS);
                if (per.compareTo(Duration.ofMillis(1)) < 0
                        || per.compareTo(Duration.ofDays(1)) > 0
                        || per.toNanos() % 1_000 != 0) {
                    throw new IllegalArgumentException(
                            prefix + ".per must be between 1ms and 1d, in whole microseconds, was " + per);
                }
            }
        }

        /** How a queue's jobs are claimed. */
        public enum Mode {
            /** Claimed with a lease, each run in its own transaction: at least once. */
            LEASED,
            /** Claimed and handled in one transaction per batch: exactly once in this database. */
            TRANSACTIONAL
        }
    }

    /**
     * Deletion of finished jobs (locksmith.retention.*), run by the instances that run
     * workers.
     *
     * @param completedAfter delete done, failed and cancelled jobs that
     *     finished longer ago than this; unset (the default): never
     * @param interval how often to delete them
     * @param batchSize rows per delete statement, 1 to 100000
     */
    public record Retention(
            @Nullable Duration completedAfter,
            @DefaultValue("1h") Duration interval,
            @DefaultValue("1000") int batchSize) {

        /**
         * Checks the values.
         *
         * @param completedAfter locksmith.retention.completed-after
         * @param interval locksmith.retention.interval
         * @param batchSize locksmith.retention.batch-size
         * @throws IllegalArgumentException naming the property
         */
        public Retention {
            if (completedAfter != null && completedAfter.isNegative()) {
                throw new IllegalArgumentException(
                        "locksmith.retention.completed-after must not be negative, was " + completedAfter);
            }
            requirePositive("locksmith.retention.interval", Objects.requireNonNull(interval, "interval"));
            requireRange("locksmith.retention.batch-size", batchSize, 1, 100_000);
        }
    }

    /**
     * The lock audit's settings (locksmith.audit.*; see
     * LockAuditConfig).
     *
     * @param slowWaitThreshold also record lock waits that succeeded after at least this long;
     *     unset (the default): record failures only
     * @param probeDelay how long a guarded statement waits before the audit looks for its blocker
     * @param probeInterval how often the audit looks again while it still waits
     * @param bufferSize rows waiting to be written before further rows are dropped (and counted)
     */
    public record Audit(
            @Nullable Duration slowWaitThreshold,
            @DefaultValue("50ms") Duration probeDelay,
            @DefaultValue("100ms") Duration probeInterval,
            @DefaultValue("10000") int bufferSize) {

        /**
         * Checks the values.
         *
         * @param slowWaitThreshold locksmith.audit.slow-wait-threshold
         * @param probeDelay locksmith.audit.probe-delay
         * @param probeInterval locksmith.audit.probe-interval
         * @param bufferSize locksmith.audit.buffer-size
         * @throws IllegalArgumentException naming the property
         */
        public Audit {
            if (slowWaitThreshold != null) {
                requirePositive("locksmith.audit.slow-wait-threshold", slowWaitThreshold);
            }
            requirePositive("locksmith.audit.probe-delay", Objects.requireNonNull(probeDelay, "probeDelay"));
            requirePositive("locksmith.audit.probe-interval", Objects.requireNonNull(probeInterval, "probeInterval"));
            requireRange("locksmith.audit.buffer-size", bufferSize, 1, Integer.MAX_VALUE);
        }
    }

    /**
     * The health indicator's settings (locksmith.health.*).
     *
     * @param enabled whether the locksmith health indicator is registered (with Spring
     *     Boot Actuator)
     * @param maxPending a queue with more pending jobs than this is OUT_OF_SERVICE;
     *     unset (the default): no limit
     * @param maxOldestPendingAge a queue whose oldest due pending job has waited longer than this
     *     is OUT_OF_SERVICE; unset (the default): no limit
     * @param depthCap pending and running jobs are counted up to this many per queue (bounded
     *     work per health check), 1 to 1000000
     */
    public record Health(
            @DefaultValue("true") boolean enabled,
            @Nullable Long maxPending,
            @Nullable Duration maxOldestPendingAge,
            @DefaultValue("10000") int depthCap) {

        /**
         * Checks the values.
         *
         * @param enabled locksmith.health.enabled
         * @param maxPending locksmith.health.max-pending
         * @param maxOldestPendingAge locksmith.health.max-oldest-pending-age
         * @param depthCap locksmith.health.depth-cap
         * @throws IllegalArgumentException naming the property
         */
        public Health {
            if (maxPending != null) {
                requireRange("locksmith.health.max-pending", maxPending, 0, 1_000_000);
            }
            if (maxOldestPendingAge != null) {
                requirePositive("locksmith.health.max-oldest-pending-age", maxOldestPendingAge);
            }
            requireRange("locksmith.health.depth-cap", depthCap, 1, 1_000_000);
        }
    }

    /**
     * The workers' watch on the database's MVCC horizon (locksmith.horizon.*): what holds it back
     * longer than this is logged at WARN once (JobWorker.Builder#horizonWarnAfter).
     *
     * @param warnAfter how long a session, replication slot, prepared transaction or standby may hold
     *     the horizon back before a worker logs it; 0s turns the check off, else 1s to 1d
     */
    public record Horizon(@DefaultValue("5m") Duration warnAfter) {

        /**
         * Checks the value.
         *
         * @param warnAfter locksmith.horizon.warn-after
         * @throws IllegalArgumentException naming the property
         */
        public Horizon {
            Objects.requireNonNull(warnAfter, "warnAfter");
            if (!warnAfter.isZero()
                    && (warnAfter.compareTo(Duration.ofSeconds(1)) < 0
                            || warnAfter.compareTo(Duration.ofDays(1)) > 0)) {
                throw new IllegalArgumentException(
                        "locksmith.horizon.warn-after must be 0s (off) or between 1s and 1d, was " + warnAfter);
            }
        }
    }

    /**
     * The gauges' settings (locksmith.metrics.*), used with locksmith-micrometer and a
     * MeterRegistry bean.
     *
     * @param limitKeysPerQueue how many keys of each queue, among those at a concurrency or rate
     *     limit that hold back the most due jobs, get a gauge of their own
     *     (locksmith.jobs.limit.key.held.back, tagged queue and key; QueueDepthMetrics.Builder#keysPerQueue),
     *     0 to 100; 0 (the default) turns it off: a key is usually a tenant, and each one tagged is
     *     a time series
     */
    public record Metrics(@DefaultValue("0") int limitKeysPerQueue) {

        /**
         * Checks the value.
         *
         * @param limitKeysPerQueue locksmith.metrics.limit-keys-per-queue
         * @throws IllegalArgumentException naming the property
         */
        public Metrics {
            requireRange(
                    "locksmith.metrics.limit-keys-per-queue", limitKeysPerQueue, 0, ConcurrencyLimits.MAX_KEYS_LISTED);
        }
    }
}

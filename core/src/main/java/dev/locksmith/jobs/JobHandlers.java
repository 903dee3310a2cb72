package dev.locksmith.jobs;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jooq.DSLContext;

/**
 * Dispatches jobs by kind to typed handlers, decoding each payload with a {@link JobCodec}: the
 * handler of a {@link JobWorker} ({@code JobHandlers} is a {@link JobHandler}) or, through
 * {@link #batched()}, of a {@link TransactionalWorker}.
 *
 * <pre>{@code
 * JobHandlers handlers = JobHandlers.builder()
 *         .on(SEND_EMAIL, (job, email) -> mailer.send(email))
 *         .on(CHARGE, (job, charge, tx) -> payments.charge(tx, charge))   // writes in the job's transaction
 *         .build();
 * JobWorker.builder(dataSource, "emails", handlers).threads(8).build().start();
 * }</pre>
 *
 * <p>A job whose kind has no handler here, or whose payload does not decode to its type's class,
 * fails permanently ({@link JobControl#failPermanently}): {@code failed} at once, with a
 * {@code last_error} that names the job, its kind and what went wrong; it is not retried, since
 * retrying cannot help, and the worker goes on with the other jobs. What a typed handler throws
 * takes the usual path (retried with backoff, or a {@link JobControl}).
 */
public final class JobHandlers implements JobHandler {

    /**
     * A typed handler that writes in the job's transaction.
     *
     * @param <T> the payload type
     */
    @FunctionalInterface
    public interface Handler<T> {
        /**
         * Does the work.
         *
         * @param job the job as claimed
         * @param payload its payload, decoded
         * @param tx the job's transaction (see {@link JobHandler} and {@link BatchJobHandler})
         * @throws Exception a failure of the work, or a {@link JobControl}
         */
        void handle(Job job, T payload, DSLContext tx) throws Exception;
    }

    /**
     * A typed handler that needs no transaction.
     *
     * @param <T> the payload type
     */
    @FunctionalInterface
    public interface PayloadHandler<T> {
        /**
         * Does the work.
         *
         * @param job the job as claimed
         * @param payload its payload, decoded
         * @throws Exception a failure of the work, or a {@link JobControl}
         */
        void handle(Job job, T payload) throws Exception;
    }

    /** One kind's handler with its type. */
    private record Route<T>(JobType<T> type, Handler<T> handler) {
        void run(Job job, JobCodec codec, DSLContext tx) throws Exception {
            T payload;
            try {
                payload = codec.decode(job.payload(), type.payloadType());
            } catch (RuntimeException e) {
                throw JobControl.failPermanently(new IllegalArgumentException(
                        "payload of job " + job.id() + " (kind " + job.kind() + ") does not decode: " + e.getMessage(),
                        e));
            }
            handler.handle(job, payload, tx);
        }
    }

    private final Map<String, Route<?>> routes;
    private final JobCodec codec;

    private JobHandlers(Builder b) {
        this.routes = Map.copyOf(b.routes);
        this.codec = b.codec;
    }

    /**
     * A builder with no handlers and the {@linkplain JobCodec#standard() standard codec}.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the kinds this dispatcher handles} */
    public Set<String> kinds() {
        return routes.keySet();
    }

    /**
     * Hands the job to the handler of its kind, with its payload decoded.
     *
     * @param job the job
     * @param tx the job's transaction
     * @throws JobControl failing the job permanently when its kind has no handler or its payload
     *     does not decode
     * @throws Exception what the typed handler throws
     */
    @Override
    public void handle(Job job, DSLContext tx) throws Exception {
        Route<?> route = routes.get(job.kind());
        if (route == null) {
            throw JobControl.failPermanently("no handler for kind '" + job.kind() + "' (job " + job.id() + ", queue "
                    + job.queue() + "); this worker handles " + new java.util.TreeSet<>(routes.keySet()));
        }
        route.run(job, codec, tx);
    }

    /**
     * This dispatcher as the handler of a {@link TransactionalWorker}: each job of a batch to its
     * kind's handler, in claim order, in the batch's transaction. A job that fails or is failed
     * permanently (unknown kind, bad payload) makes the worker roll the batch back and run its
     * jobs one at a time, as for any failing batch, so that only that job fails.
     *
     * @return a batch handler
     */
    public BatchJobHandler batched() {
        return (List<Job> jobs, DSLContext tx) -> {
            for (Job job : jobs) {
                handle(job, tx);
            }
        };
    }

    @Override
    public String toString() {
        return "JobHandlers" + new java.util.TreeSet<>(routes.keySet());
    }

    /** Builds {@link JobHandlers}. */
    public static final class Builder {
        private final Map<String, Route<?>> routes = new LinkedHashMap<>();
        private JobCodec codec = JobCodec.standard();

        private Builder() {}

        /**
         * Handles jobs of {@code type}'s kind with {@code handler}, in the job's transaction.
         *
         * @param type the job type
         * @param handler the handler
         * @param <T> the payload type
         * @return this builder
         * @throws IllegalArgumentException when the kind already has a handler
         */
        public <T> Builder on(JobType<T> type, Handler<T> handler) {
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(handler, "handler");
            Route<?> previous = routes.putIfAbsent(type.kind(), new Route<>(type, handler));
            if (previous != null) {
                throw new IllegalArgumentException("kind '" + type.kind() + "' already has a handler (payload "
                        + previous.type().payloadType().getName() + ")");
            }
            return this;
        }

        /**
         * Handles jobs of {@code type}'s kind with {@code handler}, which needs no transaction.
         *
         * @param type the job type
         * @param handler the handler
         * @param <T> the payload type
         * @return this builder
         * @throws IllegalArgumentException when the kind already has a handler
         */
        public <T> Builder on(JobType<T> type, PayloadHandler<T> handler) {
            Objects.requireNonNull(handler, "handler");
            return on(type, (Handler<T>) (job, payload, tx) -> handler.handle(job, payload));
        }

        /**
         * The codec that decodes payloads; default {@link JobCodec#standard()}. Use the codec of the
         * {@link JobQueueConfig} the jobs were enqueued with.
         *
         * @param codec the codec
         * @return this builder
         */
        public Builder codec(JobCodec codec) {
            this.codec = Objects.requireNonNull(codec, "codec");
            return this;
        }

        /**
         * The dispatcher.
         *
         * @return the handlers
         * @throws IllegalStateException when no handler was added
         */
        public JobHandlers build() {
            if (routes.isEmpty()) {
                throw new IllegalStateException("no handlers: add at least one with on(type, handler)");
            }
            return new JobHandlers(this);
        }
    }
}

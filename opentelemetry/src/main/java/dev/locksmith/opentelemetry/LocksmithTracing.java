package dev.locksmith.opentelemetry;

import dev.locksmith.exception.LocksmithException;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerBuilder;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Traces locksmith with OpenTelemetry: a span for every operation locksmith observes, and the
 * enqueuing request's trace carried to the job's handler.
 *
 * <pre>{@code
 * Locksmith traced = Locksmith.builder(dataSource).observer(LocksmithTracing.create(openTelemetry)).build();
 * JobQueue queue = new JobQueue(traced);                 // stores the caller's traceparent with each job
 * JobWorker worker = JobWorker.builder(queue, "emails", handler).build();   // spans per claim, job, completion
 * }</pre>
 *
 * <p><b>Spans.</b> Each {@link Operation} becomes a span named {@link Operation#name()}
 * (instrumentation scope {@value #INSTRUMENTATION_NAME}), a child of the context current on the
 * thread that starts it, and current itself until the operation ends: a completion inside a
 * handler is a child of the handler's span, and so is any span the handler starts. A leased
 * worker completes the jobs of handlers that wrote nothing later, in batches, on another thread:
 * that {@code locksmith.job.complete} span has no parent and <em>links</em> to the handler span of
 * each job it completes (OpenTelemetry's convention for settling a batch). The handler's
 * span ({@code locksmith.job.handle}) is {@code CONSUMER}, every other {@code INTERNAL} (they
 * stand above the SQL statements they send, which JDBC instrumentation reports as client spans).
 * Attributes: {@code locksmith.queue}, {@code locksmith.job.kind}, {@code locksmith.job.id} and
 * {@code locksmith.job.attempt} (one job), {@code locksmith.job.count},
 * {@code locksmith.claim.leased}, {@code locksmith.transfer.strategy},
 * {@code locksmith.transfer.own_transaction}, {@code locksmith.pool.waits},
 * {@code locksmith.lock.table}, {@code locksmith.lock.wait}, and at the end
 * {@code locksmith.outcome} (an {@link dev.locksmith.observe.Outcome#tag() outcome tag}, or
 * {@code error}). Job spans also carry the messaging conventions' {@code messaging.system}
 * ({@code locksmith}), {@code messaging.operation.type} ({@code receive} for a claim,
 * {@code process} for a handler, {@code settle} for a completion or failure),
 * {@code messaging.destination.name} (the queue), {@code messaging.message.id} or
 * {@code messaging.batch.message_count}; spans of operations that are SQL statements carry
 * {@code db.system=postgresql}.
 *
 * <p><b>Status.</b> An operation that throws records the exception, {@code error.type} and status
 * {@code ERROR}. Of the outcomes, only {@code lease_lost} is an error (the work done under the
 * lease was not recorded); the others are expected results (nothing due, no idle account,
 * insufficient funds, a failed attempt recorded) and leave the status unset: a failed job's
 * error is on its handler's span.
 *
 * <p><b>From the request to the handler.</b> {@link #traceparent()} gives the W3C
 * {@code traceparent} of the current span, which {@code JobQueue.enqueue} stores with the job.
 * The handler's span starts a trace of its own and <em>links</em> to the enqueuing span of each
 * of its jobs (one link per distinct span), as OpenTelemetry's messaging conventions recommend
 * for consumers: a job may run long after the request ended, several times, or in a batch of
 * jobs from many requests, and a link keeps each trace readable while still leading from one to
 * the other. The format is W3C Trace Context whatever propagators the application configured.
 *
 * <p><b>Events.</b> Enqueued jobs add an event {@code locksmith.jobs.enqueued} to the current span
 * (attributes queue, kind, count); a transaction about to be retried adds
 * {@code locksmith.retry} ({@code locksmith.retry.failed_attempts}, {@code error.type}).
 *
 * <p>Thread-safe; one instance serves every repository and worker.
 */
public final class LocksmithTracing implements LocksmithObserver {

    /** The instrumentation scope name of locksmith's spans. */
    public static final String INSTRUMENTATION_NAME = "dev.locksmith";

    private static final AttributeKey<Long> FAILED_ATTEMPTS = AttributeKey.longKey("locksmith.retry.failed_attempts");

    private final Tracer tracer;

    private LocksmithTracing(Tracer tracer) {
        this.tracer = tracer;
    }

    /**
     * Tracing with {@code openTelemetry}'s tracer provider, under the instrumentation scope
     * {@value #INSTRUMENTATION_NAME} (versioned with this jar's version).
     *
     * @param openTelemetry the application's OpenTelemetry ({@code GlobalOpenTelemetry.get()}
     *     under the Java agent)
     * @return the observer; give it to {@code Locksmith.Builder#observer}
     */
    public static LocksmithTracing create(OpenTelemetry openTelemetry) {
        Objects.requireNonNull(openTelemetry, "openTelemetry");
        TracerBuilder builder = openTelemetry.tracerBuilder(INSTRUMENTATION_NAME);
        String version = LocksmithTracing.class.getPackage().getImplementationVersion();
        if (version != null) {
            builder.setInstrumentationVersion(version);
        }
        return new LocksmithTracing(builder.build());
    }

    /**
     * Tracing with a tracer of the caller's choosing (its instrumentation scope is the caller's).
     *
     * @param tracer the tracer that starts every span
     * @return the observer; give it to {@code Locksmith.Builder#observer}
     */
    public static LocksmithTracing create(Tracer tracer) {
        return new LocksmithTracing(Objects.requireNonNull(tracer, "tracer"));
    }

    /**
     * Starts the operation's span as a child of the current context and makes it current until
     * the operation ends.
     *
     * @param operation what starts
     * @return the span's observation, ending the span and restoring the previous context
     */
    @Override
    // The scope outlives this call by design: TracedOperation closes it when locksmith ends the
    // operation, which it does on this thread.
    @SuppressWarnings("MustBeClosedChecker")
    public Observation start(Operation operation) {
        Context parent = Context.current();
        if (operation instanceof Operation.ClaimJobs
                && !Span.fromContext(parent).getSpanContext().isValid()) {
            return new PollingClaim(operation, parent, Instant.now());
        }
        SpanBuilder builder =
                tracer.spanBuilder(operation.name()).setParent(parent).setSpanKind(OperationSpans.kind(operation));
        OperationSpans.describe(operation, builder);
        Span span = builder.startSpan();
        return new TracedOperation(span, parent.with(span).makeCurrent());
    }

    /**
     * A claim outside any trace: a worker's poll. Most polls of a quiet queue find nothing, and a
     * root span for each would fill a trace backend with empty traces, so the span is made when
     * the claim ends, with the claim's start time, and only when it claimed jobs or failed. It is
     * not current while the claim runs (the claim is one statement).
     */
    private final class PollingClaim implements Observation {
        private final Operation operation;
        private final Context parent;
        private final Instant started;

        PollingClaim(Operation operation, Context parent, Instant started) {
            this.operation = operation;
            this.parent = parent;
            this.started = started;
        }

        private TracedOperation span() {
            SpanBuilder builder = tracer.spanBuilder(operation.name())
                    .setParent(parent)
                    .setSpanKind(OperationSpans.kind(operation))
                    .setStartTimestamp(started);
            OperationSpans.describe(operation, builder);
            return new TracedOperation(builder.startSpan(), Scope.noop());
        }

        @Override
        public void end(Outcome outcome) {
            if (outcome != Outcome.EMPTY) {
                span().end(outcome);
            }
        }

        @Override
        public void error(Throwable error) {
            span().error(error);
        }
    }

    /**
     * Adds the event {@code locksmith.jobs.enqueued} to the current span, when it is recording.
     *
     * @param queue their queue
     * @param kind their kind
     * @param count how many
     */
    @Override
    public void jobsEnqueued(String queue, String kind, int count) {
        Span span = Span.current();
        if (span.isRecording()) {
            span.addEvent(
                    "locksmith.jobs.enqueued",
                    Attributes.of(
                            OperationSpans.QUEUE, queue, OperationSpans.JOB_KIND, kind, OperationSpans.JOB_COUNT, (long)
                                    count));
        }
    }

    /**
     * Adds the event {@code locksmith.retry} to the current span (the transfer's, for
     * {@code Accounts.transfer}), when it is recording.
     *
     * @param failedAttempts attempts that failed so far
     * @param failure why the last one failed
     */
    @Override
    public void retried(int failedAttempts, LocksmithException failure) {
        Span span = Span.current();
        if (span.isRecording()) {
            span.addEvent(
                    "locksmith.retry",
                    Attributes.of(
                            FAILED_ATTEMPTS,
                            (long) failedAttempts,
                            OperationSpans.ERROR_TYPE,
                            failure.getClass().getName()));
        }
    }

    /**
     * The W3C {@code traceparent} of the current span, for jobs enqueued now.
     *
     * @return {@code 00-<trace id>-<span id>-<flags>}, or null when no valid span context is
     *     current (no trace, or one that is not well-formed): the stored column only ever gets
     *     a value of the shape its CHECK constraint accepts
     */
    @Override
    public @Nullable String traceparent() {
        return Traceparents.of(Context.current());
    }
}

package dev.locksmith.opentelemetry;

import dev.locksmith.jobs.Job;
import dev.locksmith.observe.Operation;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** What a span of each {@link Operation} says: its kind, its attributes and, for handlers, its links. */
final class OperationSpans {

    static final AttributeKey<String> QUEUE = AttributeKey.stringKey("locksmith.queue");
    static final AttributeKey<String> JOB_KIND = AttributeKey.stringKey("locksmith.job.kind");
    static final AttributeKey<Long> JOB_ID = AttributeKey.longKey("locksmith.job.id");
    static final AttributeKey<Long> JOB_ATTEMPT = AttributeKey.longKey("locksmith.job.attempt");
    static final AttributeKey<Long> JOB_COUNT = AttributeKey.longKey("locksmith.job.count");
    static final AttributeKey<Boolean> CLAIM_LEASED = AttributeKey.booleanKey("locksmith.claim.leased");
    static final AttributeKey<String> TRANSFER_STRATEGY = AttributeKey.stringKey("locksmith.transfer.strategy");
    static final AttributeKey<Boolean> TRANSFER_OWN_TRANSACTION =
            AttributeKey.booleanKey("locksmith.transfer.own_transaction");
    static final AttributeKey<Boolean> POOL_WAITS = AttributeKey.booleanKey("locksmith.pool.waits");
    static final AttributeKey<String> LOCK_TABLE = AttributeKey.stringKey("locksmith.lock.table");
    static final AttributeKey<String> LOCK_WAIT = AttributeKey.stringKey("locksmith.lock.wait");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("locksmith.outcome");

    // OpenTelemetry semantic conventions (database and messaging spans, errors).
    static final AttributeKey<String> DB_SYSTEM = AttributeKey.stringKey("db.system");
    static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<String> MESSAGING_OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    static final AttributeKey<String> MESSAGING_OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    static final AttributeKey<String> MESSAGING_DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<String> MESSAGING_MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    static final AttributeKey<Long> MESSAGING_BATCH_COUNT = AttributeKey.longKey("messaging.batch.message_count");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

    private OperationSpans() {}

    /**
     * {@link SpanKind#CONSUMER} for a handler run, {@link SpanKind#INTERNAL} for the rest: they
     * stand above the statements they send, which JDBC instrumentation reports as client spans
     * of their own.
     */
    static SpanKind kind(Operation operation) {
        return operation instanceof Operation.HandleJobs ? SpanKind.CONSUMER : SpanKind.INTERNAL;
    }

    /** Sets what {@code span} says of {@code operation}; an operation type added later gets its name only. */
    static void describe(Operation operation, SpanBuilder span) {
        if (operation instanceof Operation.ClaimJobs claim) {
            messaging(span, "receive", "claim", claim.queue());
            span.setAttribute(CLAIM_LEASED, claim.leased());
            database(span);
        } else if (operation instanceof Operation.HandleJobs handle) {
            messaging(span, "process", "handle", handle.queue());
            jobs(span, handle.jobs());
            linkEnqueuers(span, handle.jobs());
        } else if (operation instanceof Operation.CompleteJobs complete) {
            messaging(span, "settle", "complete", complete.queue());
            jobs(span, complete.jobs());
            linkHandlers(span, complete.links());
            database(span);
        } else if (operation instanceof Operation.FailJob fail) {
            messaging(span, "settle", "fail", fail.job().queue());
            jobs(span, List.of(fail.job()));
            database(span);
        } else if (operation instanceof Operation.Transfer transfer) {
            span.setAttribute(TRANSFER_STRATEGY, tag(transfer.strategy()));
            span.setAttribute(TRANSFER_OWN_TRANSACTION, transfer.ownTransaction());
            database(span);
        } else if (operation instanceof Operation.AcquireAccount acquire) {
            span.setAttribute(POOL_WAITS, acquire.waits());
            database(span);
        } else if (operation instanceof Operation.LockRows lock) {
            span.setAttribute(LOCK_TABLE, lock.table());
            span.setAttribute(LOCK_WAIT, tag(lock.waitKind()));
            database(span);
        }
    }

    private static void database(SpanBuilder span) {
        span.setAttribute(DB_SYSTEM, "postgresql");
    }

    private static void messaging(SpanBuilder span, String type, String name, String queue) {
        span.setAttribute(MESSAGING_SYSTEM, "locksmith");
        span.setAttribute(MESSAGING_OPERATION_TYPE, type);
        span.setAttribute(MESSAGING_OPERATION_NAME, name);
        span.setAttribute(MESSAGING_DESTINATION, queue);
        span.setAttribute(QUEUE, queue);
    }

    /** Id and attempt for one job; how many for several (messaging conventions: batch count only then). */
    private static void jobs(SpanBuilder span, List<Job> jobs) {
        span.setAttribute(JOB_COUNT, (long) jobs.size());
        String kind = jobs.get(0).kind();
        span.setAttribute(JOB_KIND, jobs.stream().allMatch(j -> j.kind().equals(kind)) ? kind : "mixed");
        if (jobs.size() == 1) {
            Job job = jobs.get(0);
            span.setAttribute(JOB_ID, job.id());
            span.setAttribute(JOB_ATTEMPT, (long) attempt(job));
            span.setAttribute(MESSAGING_MESSAGE_ID, Long.toString(job.id()));
        } else {
            span.setAttribute(MESSAGING_BATCH_COUNT, (long) jobs.size());
        }
    }

    /** The attempt that runs now, 1 for the first: a job in hand counts it, in every mode. */
    private static int attempt(Job job) {
        return job.attempts();
    }

    /**
     * A batched completion runs after the handlers it settles ended, on another thread: no parent,
     * one link per handler run, as OpenTelemetry's messaging conventions link a batch settlement to
     * the messages' processing.
     */
    private static void linkHandlers(SpanBuilder span, List<String> links) {
        for (String link : links) {
            SpanContext handler = Traceparents.parse(link);
            if (handler != null) {
                span.addLink(handler);
            }
        }
    }

    /**
     * One link per distinct enqueuing span: jobs enqueued in one request share it. Jobs without a
     * stored trace context add none.
     */
    private static void linkEnqueuers(SpanBuilder span, List<Job> jobs) {
        Set<String> linked = new HashSet<>();
        for (Job job : jobs) {
            SpanContext enqueuer = Traceparents.parse(job.traceparent());
            if (enqueuer != null && linked.add(enqueuer.getTraceId() + enqueuer.getSpanId())) {
                span.addLink(enqueuer);
            }
        }
    }

    private static String tag(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }
}

package dev.locksmith.it.tracing;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.SpanRecorder;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.opentelemetry.LocksmithTracing;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Scope;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The traceparent stored with a job: exactly the current span's, in W3C form, or null; never a
 * value the column's CHECK constraint would refuse, whichever observer supplies it.
 */
class TracingTraceparentTest extends DatabaseTest {

    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String SPAN_ID = "00f067aa0ba902b7";

    private SpanRecorder spans;
    private LocksmithTracing tracing;

    @BeforeAll
    void tracing() {
        spans = new SpanRecorder();
        tracing = spans.tracing();
    }

    @AfterAll
    void closeTracing() {
        spans.close();
    }

    private @Nullable String traceparentWithin(Span span) {
        try (Scope ignored = span.makeCurrent()) {
            return tracing.traceparent();
        }
    }

    @Test
    void noCurrentSpanMeansNoTraceparent() {
        assertThat(tracing.traceparent()).isNull();
    }

    @Test
    void anInvalidSpanContextYieldsNull() {
        assertThat(traceparentWithin(Span.wrap(SpanContext.getInvalid()))).isNull();
        // Garbage ids make an invalid context, as do all-zero ones (well-formed, but no trace).
        assertThat(traceparentWithin(Span.wrap(SpanContext.create(
                        "not-a-trace-id", "nor-a-span", TraceFlags.getSampled(), TraceState.getDefault()))))
                .isNull();
        assertThat(traceparentWithin(Span.wrap(SpanContext.create(
                        "0".repeat(32), "0".repeat(16), TraceFlags.getSampled(), TraceState.getDefault()))))
                .isNull();
    }

    @Test
    void theTraceparentIsTheCurrentSpansInW3CForm() {
        assertThat(traceparentWithin(Span.wrap(SpanContext.createFromRemoteParent(
                        TRACE_ID, SPAN_ID, TraceFlags.getDefault(), TraceState.getDefault()))))
                .isEqualTo("00-" + TRACE_ID + "-" + SPAN_ID + "-00");
        Span sampled = spans.tracer().spanBuilder("sampled").startSpan();
        try {
            assertThat(traceparentWithin(sampled))
                    .isEqualTo("00-" + sampled.getSpanContext().getTraceId() + "-"
                            + sampled.getSpanContext().getSpanId() + "-01");
        } finally {
            sampled.end();
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {"garbage", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", "00-4bf92f35-00f067aa-01"})
    void aMalformedTraceparentFromAnyObserverIsDroppedAndTheJobStillEnqueued(String malformed) {
        LocksmithObserver careless = new LocksmithObserver() {
            @Override
            public String traceparent() {
                return malformed;
            }
        };
        JobQueue queue =
                new JobQueue(Locksmith.builder(dsl).observer(careless).build().dsl());
        long id = queue.enqueue(dsl, NewJob.of("careless", "k"));
        assertThat(dsl.select(JOBS.TRACEPARENT).from(JOBS).where(JOBS.ID.eq(id)).fetchSingle(JOBS.TRACEPARENT))
                .isNull();
    }
}

package dev.locksmith.it.support;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.opentelemetry.LocksmithTracing;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * An OpenTelemetry SDK that keeps every finished span in memory, and waits (bounded, woken by
 * each span that ends, never sleeping) for the spans other threads finish.
 */
public final class SpanRecorder implements AutoCloseable {

    public static final AttributeKey<String> QUEUE = AttributeKey.stringKey("locksmith.queue");
    public static final AttributeKey<String> JOB_KIND = AttributeKey.stringKey("locksmith.job.kind");
    public static final AttributeKey<Long> JOB_ID = AttributeKey.longKey("locksmith.job.id");
    public static final AttributeKey<Long> JOB_ATTEMPT = AttributeKey.longKey("locksmith.job.attempt");
    public static final AttributeKey<Long> JOB_COUNT = AttributeKey.longKey("locksmith.job.count");
    public static final AttributeKey<Boolean> CLAIM_LEASED = AttributeKey.booleanKey("locksmith.claim.leased");
    public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("locksmith.outcome");
    public static final AttributeKey<String> DB_SYSTEM = AttributeKey.stringKey("db.system");
    public static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

    private static final long WAIT_SECONDS = 30;

    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final Object lock = new Object();
    private final OpenTelemetrySdk sdk;

    public SpanRecorder() {
        SpanProcessor wakeWaiters = new SpanProcessor() {
            @Override
            public void onStart(Context parentContext, ReadWriteSpan span) {}

            @Override
            public boolean isStartRequired() {
                return false;
            }

            @Override
            public void onEnd(ReadableSpan span) {
                synchronized (lock) {
                    lock.notifyAll();
                }
            }

            @Override
            public boolean isEndRequired() {
                return true;
            }
        };
        sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder()
                        // exported first, then the waiters are woken: they find the span
                        .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                        .addSpanProcessor(wakeWaiters)
                        .build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
    }

    public OpenTelemetry openTelemetry() {
        return sdk;
    }

    public LocksmithTracing tracing() {
        return LocksmithTracing.create(sdk);
    }

    /** The tracer of the test's own spans (the "request", the handler's work). */
    public Tracer tracer() {
        return sdk.getTracer("test");
    }

    public List<SpanData> finished() {
        return exporter.getFinishedSpanItems();
    }

    public List<SpanData> named(String name) {
        return finished().stream().filter(s -> s.getName().equals(name)).toList();
    }

    /** The one finished span named {@code name} whose {@code key} is {@code value}, once it has ended. */
    public <T> SpanData await(String name, AttributeKey<T> key, T value) throws InterruptedException {
        return await(
                name + " with " + key + "=" + value,
                s -> s.getName().equals(name)
                        && Objects.equals(s.getAttributes().get(key), value));
    }

    /** The first finished span matching {@code match}, waiting up to 30 s for it to end. */
    public SpanData await(String what, Predicate<SpanData> match) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        synchronized (lock) {
            while (true) {
                List<SpanData> found = finished().stream().filter(match).toList();
                if (!found.isEmpty()) {
                    assertThat(found).as("spans that are " + what).hasSize(1);
                    return found.get(0);
                }
                long left = deadline - System.nanoTime();
                assertThat(left)
                        .as("a span that is %s ended within %d s", what, WAIT_SECONDS)
                        .isPositive();
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
        }
    }

    @Override
    public void close() {
        sdk.close();
    }
}

package dev.locksmith.opentelemetry;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The W3C {@code traceparent} stored in {@code jobs.traceparent}, written and read with the W3C
 * propagator whatever propagators the application configured: the column holds that one format.
 */
final class Traceparents {

    private static final String HEADER = "traceparent";

    /** The shape the column's CHECK constraint ({@code jobs_traceparent_shape}) accepts. */
    private static final Pattern SHAPE = Pattern.compile("[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");

    private static final TextMapSetter<Map<String, String>> SETTER = (carrier, key, value) -> {
        if (carrier != null) {
            carrier.put(key, value);
        }
    };

    private static final TextMapGetter<String> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(String carrier) {
            return List.of(HEADER);
        }

        @Override
        public @Nullable String get(@Nullable String carrier, String key) {
            return HEADER.equals(key) ? carrier : null;
        }
    };

    private Traceparents() {}

    /**
     * The {@code traceparent} of {@code context}'s span, or null when it has no valid span
     * context; never a value the column would refuse.
     */
    static @Nullable String of(Context context) {
        Map<String, String> carrier = new HashMap<>(4);
        W3CTraceContextPropagator.getInstance().inject(context, carrier, SETTER);
        @Nullable String traceparent = carrier.get(HEADER);
        return traceparent != null && SHAPE.matcher(traceparent).matches() ? traceparent : null;
    }

    /** The span context a stored {@code traceparent} names, or null when it names none. */
    static @Nullable SpanContext parse(@Nullable String traceparent) {
        if (traceparent == null) {
            return null;
        }
        Context extracted = W3CTraceContextPropagator.getInstance().extract(Context.root(), traceparent, GETTER);
        SpanContext spanContext = Span.fromContext(extracted).getSpanContext();
        return spanContext.isValid() ? spanContext : null;
    }
}

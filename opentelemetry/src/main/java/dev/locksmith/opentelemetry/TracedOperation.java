package dev.locksmith.opentelemetry;

import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Outcome;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import org.jspecify.annotations.Nullable;

/**
 * The span of one operation, current on the thread that started it until the operation ends
 * (locksmith ends it on that thread, so the scope closes where it opened).
 */
final class TracedOperation implements Observation {

    private final Span span;
    private final Scope scope;
    private boolean ended;

    TracedOperation(Span span, Scope scope) {
        this.span = span;
        this.scope = scope;
    }

    @Override
    public void end(Outcome outcome) {
        if (ended) {
            return;
        }
        ended = true;
        scope.close();
        span.setAttribute(OperationSpans.OUTCOME, outcome.tag());
        if (outcome == Outcome.LEASE_LOST) {
            // The work done under the lease was not recorded (rolled back, or the job had been
            // rescued or cancelled meanwhile): a failure of this attempt, unlike the expected
            // outcomes (nothing due, no idle account, insufficient funds).
            span.setAttribute(OperationSpans.ERROR_TYPE, outcome.tag());
            span.setStatus(StatusCode.ERROR, "the job's lease was lost");
        }
        span.end();
    }

    /** {@return the span's {@code traceparent}: a batched completion of this handler run links to it} */
    @Override
    public @Nullable String traceparent() {
        return Traceparents.of(Context.root().with(span));
    }

    @Override
    public void error(Throwable error) {
        if (ended) {
            return;
        }
        ended = true;
        scope.close();
        span.setAttribute(OperationSpans.OUTCOME, "error");
        span.setAttribute(OperationSpans.ERROR_TYPE, error.getClass().getName());
        span.recordException(error);
        String message = error.getMessage();
        if (message == null) {
            span.setStatus(StatusCode.ERROR);
        } else {
            span.setStatus(StatusCode.ERROR, message);
        }
        span.end();
    }
}

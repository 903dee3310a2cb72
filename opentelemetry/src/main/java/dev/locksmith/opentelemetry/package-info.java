/**
 * OpenTelemetry tracing for locksmith: {@link dev.locksmith.opentelemetry.LocksmithTracing}, a
 * {@link dev.locksmith.observe.LocksmithObserver} that makes a span of every operation locksmith
 * observes (claims, handler runs, completions, failed attempts, transfers, pool acquires, row
 * locks) and stores the enqueuing request's W3C {@code traceparent} with each job, so that the
 * span of the job's handler links back to the request that asked for it. Depends on the
 * OpenTelemetry API only; the application brings the SDK or the Java agent.
 */
@NullMarked
package dev.locksmith.opentelemetry;

import org.jspecify.annotations.NullMarked;

/**
 * Observation of locksmith's repositories and workers, for metrics and traces: a
 * {@link dev.locksmith.observe.LocksmithObserver}, part of the {@link dev.locksmith.Locksmith}
 * environment the repositories and workers are built from, is told when operations start and end (claims, handler runs, completions, failures, transfers,
 * pool acquires, row locks) and of the events between them (jobs enqueued, claimed, completed,
 * retried, failed, leases lost, jobs rescued, retries, deadlocks and lock timeouts).
 *
 * <p>locksmith ships two observers in their own artifacts: {@code locksmith-micrometer}
 * (counters, timers and gauges) and {@code locksmith-opentelemetry} (spans, and a trace carried
 * from the enqueuing request to the handler). Nothing here depends on either.
 */
@NullMarked
package dev.locksmith.observe;

import org.jspecify.annotations.NullMarked;

/**
 * Micrometer meters for locksmith. {@link dev.locksmith.micrometer.LocksmithMetrics} is a
 * {@link dev.locksmith.observe.LocksmithObserver} that counts and times what the repositories and
 * workers do (jobs enqueued, claimed, completed, retried, failed, leases lost, claims, handler runs,
 * transfers, pool acquisitions, row lock waits, retries, deadlocks and lock timeouts);
 * {@link dev.locksmith.micrometer.QueueDepthMetrics}, {@link dev.locksmith.micrometer.PoolMetrics}
 * and {@link dev.locksmith.micrometer.HorizonMetrics} are gauges of queue depth, channel account
 * pool state and the age of what holds the MVCC horizon back, read from the database at most once
 * per refresh interval whatever the scrape rate. Each is a {@code MeterBinder}: bind it to the
 * application's {@code MeterRegistry} (Spring Boot binds {@code MeterBinder} beans itself).
 *
 * <p>Every tag has a bounded set of values: queue and job kind names (which an application keeps
 * to a fixed set), transfer strategies, outcomes, reasons, statuses, table names. No id, key or
 * owner ever becomes a tag.
 */
@NullMarked
package dev.locksmith.micrometer;

import org.jspecify.annotations.NullMarked;

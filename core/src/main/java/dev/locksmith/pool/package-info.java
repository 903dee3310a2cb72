/**
 * A pool of named resources (channel accounts) that callers lease one at a time:
 * {@link dev.locksmith.pool.ChannelAccountPool} acquires an idle one without waiting for other
 * acquirers ({@code SKIP LOCKED}, chosen as {@link dev.locksmith.pool.AcquireStrategy} says),
 * and releases it in the caller's transaction, so the release commits with the outcome it
 * records. Leases expire on the database clock.
 */
@NullMarked
package dev.locksmith.pool;

import org.jspecify.annotations.NullMarked;

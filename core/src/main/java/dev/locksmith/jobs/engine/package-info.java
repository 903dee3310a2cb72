/**
 * Every statement of the job queue, in one home, grouped by what it does (see
 * {@link dev.locksmith.jobs.engine.QueueEngine}): the insert, the claims, lease transitions,
 * failures and controls, two-phase steps, one job's administration, maintenance and reads.
 * {@code JobQueue} is a facade over it, and the workers' runtime calls it. <b>Not API</b>: the
 * module does not export this package.
 */
@NullMarked
package dev.locksmith.jobs.engine;

import org.jspecify.annotations.NullMarked;

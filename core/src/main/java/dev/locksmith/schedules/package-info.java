/**
 * Recurring jobs: {@link dev.locksmith.schedules.Schedules} keeps named schedules (a cron
 * expression in a time zone, or a fixed interval, and the job to enqueue) in the
 * {@code schedules} table, and a tick ({@link dev.locksmith.schedules.Schedules#runDue()}, run
 * every few seconds by {@link dev.locksmith.schedules.SchedulerWorker}) enqueues each due
 * occurrence into the {@link dev.locksmith.jobs.JobQueue} exactly once, however many JVMs tick:
 * the tick locks the due schedule rows with {@code FOR UPDATE SKIP LOCKED} and enqueues and
 * advances them in one transaction. The jobs are then run by the queue's workers.
 */
@NullMarked
package dev.locksmith.schedules;

import org.jspecify.annotations.NullMarked;

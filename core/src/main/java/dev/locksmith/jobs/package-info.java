/**
 * A job queue in a PostgreSQL table: producers {@linkplain dev.locksmith.jobs.JobQueue#enqueue
 * enqueue} in their own transaction, so a job exists exactly when the work that asked for it
 * commits; workers claim with {@code FOR UPDATE SKIP LOCKED}, so they never wait for each
 * other and no job is handed to two of them. Two ways to run jobs:
 * {@link dev.locksmith.jobs.JobWorker} leases each job (a row lease that survives the claiming
 * transaction, with heartbeats and rescue of expired leases), and
 * {@link dev.locksmith.jobs.TransactionalWorker} runs a batch inside the claiming transaction,
 * so the handler's writes and the completion commit together.
 * {@link dev.locksmith.jobs.TwoPhaseWorker} adds a side effect outside the database between
 * {@code PREPARE TRANSACTION} and {@code COMMIT PREPARED}, with a resolver for the transactions a
 * dead worker leaves prepared.
 */
@NullMarked
package dev.locksmith.jobs;

import org.jspecify.annotations.NullMarked;

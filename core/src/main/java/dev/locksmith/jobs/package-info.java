/**
 * A job queue in a PostgreSQL table: producers {@linkplain dev.locksmith.jobs.JobQueue#enqueue
 * enqueue} in their own transaction, so a job exists exactly when the work that asked for it
 * commits; workers claim with {@code FOR UPDATE SKIP LOCKED}, so they never wait for each
 * other and no job is handed to two of them. Three {@linkplain dev.locksmith.jobs.Worker workers},
 * one loop with three modes, built by one {@link dev.locksmith.jobs.WorkerBuilder}:
 * {@link dev.locksmith.jobs.JobWorker} leases each job (a row lease that survives the claiming
 * transaction, with heartbeats and rescue of expired leases), and
 * {@link dev.locksmith.jobs.TransactionalWorker} runs a batch inside the claiming transaction,
 * so the handler's writes and the completion commit together.
 * {@link dev.locksmith.jobs.TwoPhaseWorker} adds a side effect outside the database between
 * {@code PREPARE TRANSACTION} and {@code COMMIT PREPARED}, with a resolver for the transactions a
 * dead worker leaves prepared.
 *
 * <p>This package is what users call: the {@code JobQueue} facade, the values it takes and gives
 * ({@code Job} is made only by the queue), handlers, controls and codecs, and the worker facades.
 * The statements live in {@code dev.locksmith.jobs.engine} and the worker loop in
 * {@code dev.locksmith.jobs.runtime}, which the module does not export.
 */
@NullMarked
package dev.locksmith.jobs;

import org.jspecify.annotations.NullMarked;

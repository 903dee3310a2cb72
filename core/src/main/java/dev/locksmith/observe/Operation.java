package dev.locksmith.observe;

import dev.locksmith.LockWait;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.jobs.Job;
import java.util.List;
import java.util.Objects;

/**
 * An operation of locksmith's that an observer can time or trace. Each type says what it covers
 * and with which {@link Outcome}s it ends; each has a {@link #name()} that is used as the span
 * name and as the base of metric names.
 */
public sealed interface Operation
        permits Operation.ClaimJobs,
                Operation.HandleJobs,
                Operation.CompleteJobs,
                Operation.FailJob,
                Operation.Transfer,
                Operation.AcquireAccount,
                Operation.LockRows {

    /**
     * {@return the operation's name, such as {@code locksmith.job.claim}: the span name, and the
     * base of the metric names}
     */
    String name();

    /**
     * One claim statement: {@code JobQueue.claim} (leased) or {@code claimInTransaction}. Ends
     * {@link Outcome#OK} when it claimed jobs, {@link Outcome#EMPTY} when none was due.
     *
     * @param queue the queue claimed from
     * @param leased true for a leased claim, false for a claim in the caller's transaction
     */
    record ClaimJobs(String queue, boolean leased) implements Operation {
        /**
         * Checks the queue name is there.
         *
         * @param queue the queue claimed from
         * @param leased true for a leased claim
         */
        public ClaimJobs {
            Objects.requireNonNull(queue, "queue");
        }

        @Override
        public String name() {
            return "locksmith.job.claim";
        }
    }

    /**
     * A worker runs its handler: one job for {@code JobWorker} (and for {@code
     * TransactionalWorker} when it isolates jobs), a batch for {@code TransactionalWorker}
     * otherwise; for {@code TwoPhaseWorker} one job, from its claim through the side effect to
     * {@code COMMIT PREPARED}. Ends {@link Outcome#OK} when the handler returned (for
     * {@code JobWorker}, when the completion committed too; for {@code TwoPhaseWorker}, when
     * {@code COMMIT PREPARED} did), {@link Outcome#LEASE_LOST} when the lease was gone at
     * completion, {@link Outcome#SNOOZED} or {@link Outcome#CANCELLED} when the handler snoozed
     * or cancelled its job ({@code JobControl}); {@link Observation#error} with what the handler
     * threw (a failure, or a control that retries or fails the job), once the failed attempt of a
     * single job has been recorded (so its {@link FailJob} runs inside this operation, as a
     * completion does), or with why {@code COMMIT PREPARED} failed (a resolver settles the job
     * later).
     *
     * @param jobs the jobs handed to the handler, at least one
     */
    record HandleJobs(List<Job> jobs) implements Operation {
        /**
         * Copies the list.
         *
         * @param jobs the jobs handed to the handler, at least one
         * @throws IllegalArgumentException when {@code jobs} is empty
         */
        public HandleJobs {
            jobs = List.copyOf(jobs);
            if (jobs.isEmpty()) {
                throw new IllegalArgumentException("a handler runs at least one job");
            }
        }

        /** {@return the queue of the jobs} */
        public String queue() {
            return jobs.get(0).queue();
        }

        /**
         * The kind of the jobs, for a bounded metric tag.
         *
         * @return their kind when they all have the same, else {@code "mixed"}
         */
        public String kind() {
            String kind = jobs.get(0).kind();
            return jobs.stream().allMatch(j -> j.kind().equals(kind)) ? kind : "mixed";
        }

        @Override
        public String name() {
            return "locksmith.job.handle";
        }
    }

    /**
     * {@code JobQueue.complete} or {@code completeAll} of leased jobs, or a leased worker's
     * completion of one job in its handler's transaction or of a batch of jobs whose handlers
     * wrote nothing. Ends {@link Outcome#OK} when at least one was completed,
     * {@link Outcome#LEASE_LOST} when none was still held.
     *
     * <p>A batched completion runs on the worker's completer thread after the handlers ended, so
     * it has no parent operation: {@code links} carries the trace contexts of the handler runs it
     * completes ({@link Observation#traceparent()}), for a tracer to link to, as OpenTelemetry's
     * convention for a batch that settles messages received by several consumers does.
     *
     * @param jobs the jobs to complete, at least one
     * @param links W3C {@code traceparent}s of the handler runs this completion settles; empty when
     *     it runs inside the handler's own operation, or none was traced
     */
    record CompleteJobs(List<Job> jobs, List<String> links) implements Operation {
        /**
         * Copies the lists.
         *
         * @param jobs the jobs to complete, at least one
         * @param links the handler runs' trace contexts, possibly none
         * @throws IllegalArgumentException when {@code jobs} is empty
         */
        public CompleteJobs {
            jobs = List.copyOf(jobs);
            links = List.copyOf(links);
            if (jobs.isEmpty()) {
                throw new IllegalArgumentException("a completion has at least one job");
            }
        }

        /** {@return the queue of the first job} */
        public String queue() {
            return jobs.get(0).queue();
        }

        @Override
        public String name() {
            return "locksmith.job.complete";
        }
    }

    /**
     * Recording a failed attempt or what a handler's {@code JobControl} asked for:
     * {@code JobQueue.fail} or {@code settle} for a leased job, or the requeue of a job
     * {@code TransactionalWorker} or {@code TwoPhaseWorker} claimed. Ends
     * {@link Outcome#RETRY_SCHEDULED}, {@link Outcome#FAILED}, {@link Outcome#SNOOZED},
     * {@link Outcome#CANCELLED} or {@link Outcome#LEASE_LOST} (for {@code TwoPhaseWorker}:
     * another claimer took the job after its claim's hold ran out).
     *
     * @param job the job whose attempt failed
     */
    record FailJob(Job job) implements Operation {
        /**
         * Checks the job is there.
         *
         * @param job the job whose attempt failed
         */
        public FailJob {
            Objects.requireNonNull(job, "job");
        }

        @Override
        public String name() {
            return "locksmith.job.fail";
        }
    }

    /**
     * {@code Accounts.transfer}, all its attempts included. Ends {@link Outcome#OK} (the money
     * moved), {@link Outcome#INSUFFICIENT_FUNDS} or {@link Outcome#ALREADY_TRANSFERRED}.
     *
     * @param strategy how the transfer is kept correct
     * @param ownTransaction true when the transfer runs in its own transaction(s), false in the
     *     caller's
     */
    record Transfer(TransferStrategy strategy, boolean ownTransaction) implements Operation {
        /**
         * Checks the strategy is there.
         *
         * @param strategy how the transfer is kept correct
         * @param ownTransaction true for the transfer's own transaction
         */
        public Transfer {
            Objects.requireNonNull(strategy, "strategy");
        }

        @Override
        public String name() {
            return "locksmith.transfer";
        }
    }

    /**
     * {@code ChannelAccountPool.acquire}, its bounded wait included. Ends {@link Outcome#OK}
     * with an account, {@link Outcome#EMPTY} when none was idle (no wait asked for),
     * {@link Outcome#TIMED_OUT} when the wait ended without one.
     *
     * @param waits true when the caller asked to wait for an idle account
     */
    record AcquireAccount(boolean waits) implements Operation {
        @Override
        public String name() {
            return "locksmith.pool.acquire";
        }
    }

    /**
     * {@code Accounts.lockForUpdate}: row locks taken under a {@link LockWait}. Ends
     * {@link Outcome#OK} with the rows locked (or skipped, for {@link LockWait.Kind#SKIP_LOCKED}),
     * or {@link Observation#error} with {@link dev.locksmith.exception.LockNotAvailableException} when the
     * bound ran out (or the row was locked, for {@code NOWAIT}).
     *
     * @param table the table whose rows are locked, such as {@code accounts}
     * @param waitKind how long the statement may wait for the locks
     */
    record LockRows(String table, LockWait.Kind waitKind) implements Operation {
        /**
         * Checks both are there.
         *
         * @param table the table whose rows are locked
         * @param waitKind how long the statement may wait
         */
        public LockRows {
            Objects.requireNonNull(table, "table");
            Objects.requireNonNull(waitKind, "waitKind");
        }

        @Override
        public String name() {
            return "locksmith.lock.rows";
        }
    }
}

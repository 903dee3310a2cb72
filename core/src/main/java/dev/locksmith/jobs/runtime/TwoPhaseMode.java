package dev.locksmith.jobs.runtime;

import dev.locksmith.exception.LocksmithException;
import dev.locksmith.exception.PgErrors;
import dev.locksmith.internal.AfterCommit;
import dev.locksmith.internal.ErrorTexts;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import dev.locksmith.jobs.PreparedJob;
import dev.locksmith.jobs.ResolveResult;
import dev.locksmith.jobs.SideEffectCheck;
import dev.locksmith.jobs.TwoPhaseJobHandler;
import dev.locksmith.jobs.engine.PreparedTransactions;
import dev.locksmith.jobs.engine.QueueEngine;
import dev.locksmith.jobs.engine.TwoPhaseSteps;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.BiFunction;
import org.jooq.DSLContext;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.slf4j.Logger;

/**
 * Two-phase mode ({@code TwoPhaseWorker}): each loop thread claims one job (counting its attempt
 * and holding it in one auto-committed statement), deletes it and runs the handler's database work
 * in a transaction it then prepares, runs the side effect outside any transaction, and commits or
 * rolls back the prepared transaction. A resolver settles, on the maintenance thread, the prepared
 * transactions dead workers left behind. Loop threads are not interrupted at shutdown: a side
 * effect cut short would be repeated under its idempotency key. <b>Internal: not API.</b>
 */
public final class TwoPhaseMode implements Mode {

    /** The shortest hold of a claimed job: {@code resolveOlderThan}, at least this. */
    private static final Duration MIN_HOLD = Duration.ofMinutes(1);

    /** Test seam (not API): called between the steps of a job, on its worker thread. */
    public interface Seam {
        /** Does nothing. */
        Seam NONE = new Seam() {};

        /**
         * After {@code PREPARE TRANSACTION}, before the side effect, with the server process id of
         * the connection that prepared (back in the pool by now).
         *
         * @param job the prepared job
         * @param backendPid the server process that prepared it
         */
        default void afterPrepare(PreparedJob job, int backendPid) {}

        /**
         * After the claim, before the transaction to be prepared takes the job.
         *
         * @param job the job as the claim returned it
         */
        default void beforeTake(Job job) {}

        /**
         * Just before {@code COMMIT PREPARED} ({@code commit}) or {@code ROLLBACK PREPARED}, with
         * the server process id of the connection about to send it.
         *
         * @param job the prepared job
         * @param commit true before {@code COMMIT PREPARED}
         * @param backendPid the server process about to send it
         */
        default void beforeFinish(PreparedJob job, boolean commit, int backendPid) {}

        /**
         * The hold of each claim, given the worker's: a test makes it run out while a transaction
         * is prepared.
         *
         * @param hold the worker's hold
         * @return the hold to use
         */
        default Duration hold(Duration hold) {
            return hold;
        }
    }

    private final WorkerRuntime runtime;
    private final QueueEngine engine;
    private final RuntimeSettings settings;
    private final Logger log;
    private final TwoPhaseConnections connections;
    private final String schema;
    private final Claim claim;
    private final TwoPhaseJobHandler handler;
    private final Duration resolveInterval;
    private final Duration hold;
    private final Seam seam;
    private final BiFunction<Job, String, PreparedJob> preparedJobs;
    private final PreparedJobResolver resolver;
    private volatile @Nullable PreparedTransactions transactions;

    /**
     * Two-phase mode for {@code runtime}'s worker.
     *
     * @param runtime the worker's runtime
     * @param schema the schema of the jobs table, part of every gid
     * @param handler the database work and the side effect of each job
     * @param check asked by the resolver whether a prepared job's side effect happened
     * @param resolveOlderThan how long a transaction must have been prepared before the resolver settles it
     * @param resolveInterval how often the resolver runs
     * @param seam the test seam, {@link Seam#NONE} outside tests
     * @param preparedJobs makes the prepared job handed to the side effect (only the jobs package can)
     */
    public TwoPhaseMode(
            WorkerRuntime runtime,
            String schema,
            TwoPhaseJobHandler handler,
            SideEffectCheck check,
            Duration resolveOlderThan,
            Duration resolveInterval,
            Seam seam,
            BiFunction<Job, String, PreparedJob> preparedJobs) {
        this.runtime = runtime;
        this.engine = runtime.engine();
        this.settings = runtime.settings();
        this.log = settings.log();
        this.connections = new TwoPhaseConnections(runtime.dataSource(), engine.dsl());
        this.schema = schema;
        this.claim = new Claim(settings.queue(), 1, settings.shards());
        this.handler = handler;
        this.resolveInterval = resolveInterval;
        this.hold = seam.hold(resolveOlderThan.compareTo(MIN_HOLD) > 0 ? resolveOlderThan : MIN_HOLD);
        this.seam = seam;
        this.preparedJobs = preparedJobs;
        this.resolver = new PreparedJobResolver(
                connections, engine, settings.queue(), check, resolveOlderThan, runtime.observing(), log, preparedJobs);
    }

    @Override
    public String description() {
        return "two-phase worker (with its resolver)";
    }

    @Override
    public int connectionsNeeded() {
        return settings.threads() + 1 + (settings.listensOnPool() ? 1 : 0);
    }

    @Override
    public int loops() {
        return settings.threads();
    }

    @Override
    public String loopName(int index) {
        return "2pc-" + index;
    }

    @Override
    public void check() {
        transactions();
        if (connections.autoCommit(engine::shards) > 0) {
            // Its later steps lock the job by id alone (a multi-shard lock, which Citus refuses),
            // and a prepared transaction spanning Citus nodes is Citus's own to resolve.
            throw new IllegalStateException("the two-phase worker does not run on Citus yet (the jobs table is "
                    + "distributed): use TransactionalWorker or JobWorker there");
        }
    }

    @Override
    public void starting() {
        resolveRound(transactions());
    }

    @Override
    public List<Periodic> periodic() {
        return List.of(new Periodic(
                resolveInterval,
                resolveInterval,
                () -> {
                    resolveRound(transactions());
                    runtime.horizon().runIfDue();
                },
                false));
    }

    @Override
    public boolean interruptsLoops() {
        return false;
    }

    @Override
    public Turn turn(int loop) {
        try {
            return runOne(transactions());
        } catch (RuntimeException | Error e) {
            log.warn("two-phase worker of queue {} could not claim; trying again", settings.queue(), e);
            return Turn.EMPTY;
        }
    }

    /**
     * One resolver round now, on the calling thread.
     *
     * @return what the round did
     */
    public ResolveResult resolveNow() {
        return resolver.resolve(transactions());
    }

    /** One job, claim to commit; {@code EMPTY} when there was none, {@code FULL} without a slot to prepare it in. */
    private Turn runOne(PreparedTransactions prepared) {
        List<Job> claimed = connections.autoCommit(ctx -> engine.claims.twoPhase(ctx, claim, hold));
        if (claimed.isEmpty()) {
            return Turn.EMPTY;
        }
        Job job = claimed.get(0);
        if (job.attempts() > job.maxAttempts()) {
            failExhausted(job);
            return Turn.MORE;
        }
        Attempt attempt = new Attempt(
                preparedJobs.apply(job, prepared.gid(job.id())),
                runtime.observing().start(new Operation.HandleJobs(claimed)));
        // Jobs the handler enqueues wake their workers once COMMIT PREPARED made them visible (a
        // NOTIFY inside the transaction would keep it from being prepared).
        AfterCommit.openPrepared();
        try {
            prepare(prepared, attempt);
            Throwable failure = attempt.failure;
            if (attempt.notTaken == TwoPhaseSteps.Take.GONE) {
                log.warn(
                        "job {} ({}) of queue {}: another claimer took it before this worker's transaction did (its hold "
                                + "of {} ran out); left to that claimer",
                        job.id(),
                        job.kind(),
                        job.queue(),
                        hold);
                attempt.handling.end(Outcome.LEASE_LOST);
            } else if (attempt.notTaken == TwoPhaseSteps.Take.GIVEN_UP) {
                // not run: back in the queue, due now, its attempt not counted
                connections.autoCommit(ctx -> {
                    engine.twoPhase.release(ctx, job, Duration.ZERO);
                    return null;
                });
                log.warn(
                        "job {} ({}) of queue {}: its hold of {} ran out, or another claim held its concurrency key's slot"
                                + " through the lock wait, before this worker's transaction took it; back in the queue,"
                                + " its attempt not counted",
                        job.id(),
                        job.kind(),
                        job.queue(),
                        hold);
                attempt.handling.end(Outcome.LEASE_LOST);
            } else if (failure == null) {
                Throwable effectFailure = null;
                try {
                    seam.afterPrepare(attempt.job, attempt.preparedBy);
                    handler.performSideEffect(attempt.job);
                } catch (Exception | Error e) {
                    effectFailure = e;
                }
                finish(prepared, attempt, effectFailure);
            } else if (PreparedTransactions.slotsExhausted(failure)) {
                // Not the job's fault: back in the queue uncounted, and this thread pauses.
                connections.autoCommit(ctx -> {
                    engine.twoPhase.release(ctx, job, settings.pollInterval());
                    return null;
                });
                log.warn(
                        "job {} of queue {} is back in the queue, its attempt not counted: PREPARE TRANSACTION found "
                                + "all max_prepared_transactions ({}) in use; raise it, or check that resolvers run",
                        job.id(),
                        settings.queue(),
                        prepared.maxPreparedTransactions(),
                        failure);
                attempt.handling.error(failure);
                return Turn.FULL;
            } else {
                failed(attempt, failure, null);
            }
        } finally {
            AfterCommit.close(attempt.committed);
            attempt.mdc.close();
        }
        return Turn.MORE;
    }

    /** A claimed job on its way through the steps. */
    private static final class Attempt {
        final PreparedJob job;
        final JobLogging.Scope mdc;
        final Observation handling;
        /** What failed before the transaction was prepared; null once it is prepared. */
        @Nullable
        Throwable failure;

        /** Why the transaction did not take the job (see {@link TwoPhaseSteps#take}); null once taken. */
        TwoPhaseSteps.@Nullable Take notTaken;

        /** {@code COMMIT PREPARED} succeeded. */
        boolean committed;

        /** The server process that prepared it, for the test seam only (0 without one). */
        int preparedBy;

        Attempt(PreparedJob job, Observation handling) {
            this.job = job;
            this.mdc = JobLogging.mdc(job.job(), job.job().attempts());
            this.handling = handling;
        }
    }

    /**
     * The claiming transaction, on one connection: deletes the claimed job, runs the handler's
     * database work and prepares. A failure is left in the attempt, with the transaction rolled
     * back (the job then stands as the claim left it: attempt counted, held).
     */
    private void prepare(PreparedTransactions prepared, Attempt attempt) {
        Connection connection;
        try {
            connection = connections.borrow();
        } catch (RuntimeException e) {
            attempt.failure = e;
            return;
        }
        try {
            connection.setAutoCommit(false);
            DSLContext tx = connections.on(connection);
            seam.beforeTake(attempt.job.job());
            TwoPhaseSteps.Take take = engine.twoPhase.take(tx, attempt.job.job());
            if (take != TwoPhaseSteps.Take.TAKEN) {
                attempt.notTaken = take;
                connection.rollback();
                return;
            }
            handler.handleInTransaction(attempt.job.job(), tx);
            prepared.prepare(tx, attempt.job.gid());
            if (seam != Seam.NONE) {
                attempt.preparedBy = connection.unwrap(PGConnection.class).getBackendPID();
            }
        } catch (Exception | Error e) {
            attempt.failure = e;
            rollbackQuietly(connection, e);
        } finally {
            // After PREPARE (or the rollback) no transaction is open: back to auto-commit sends nothing.
            release(connection);
        }
    }

    /** A claim found the job past its last attempt: the worker of that attempt died before recording it. */
    private void failExhausted(Job job) {
        try {
            connections.autoCommit(ctx -> engine.twoPhase.failExhausted(ctx, job));
            log.error(
                    "job {} ({}) of queue {} failed for good: its last attempt ({} of {}) did not finish, its worker "
                            + "died before recording the outcome",
                    job.id(),
                    job.kind(),
                    job.queue(),
                    job.maxAttempts(),
                    job.maxAttempts());
        } catch (RuntimeException e) {
            log.warn("job {} of queue {} is past its last attempt but could not be failed", job.id(), job.queue(), e);
        }
    }

    /** COMMIT PREPARED after the side effect, or ROLLBACK PREPARED after its failure; never throws. */
    private void finish(PreparedTransactions prepared, Attempt attempt, @Nullable Throwable effectFailure) {
        boolean commit = effectFailure == null;
        String gid = attempt.job.gid();
        Connection connection;
        try {
            connection = connections.borrow();
        } catch (RuntimeException e) {
            if (effectFailure != null) {
                e.addSuppressed(effectFailure);
            }
            unfinished(attempt, commit, e);
            return;
        }
        try {
            if (seam != Seam.NONE) {
                seam.beforeFinish(
                        attempt.job,
                        commit,
                        connection.unwrap(PGConnection.class).getBackendPID());
            }
            DSLContext ctx = connections.on(connection);
            if (commit) {
                prepared.commit(ctx, gid);
            } else {
                prepared.rollback(ctx, gid);
            }
        } catch (SQLException | RuntimeException e) {
            if (effectFailure != null) {
                e.addSuppressed(effectFailure);
            }
            TwoPhaseConnections.closeQuietly(connection, e);
            unfinished(attempt, commit, e);
            return;
        }
        release(connection);
        if (commit) {
            attempt.committed = true;
            runtime.processed(1);
            attempt.handling.end(Outcome.OK);
            runtime.observing().jobEvent(JobEvent.COMPLETED, attempt.job.job());
        } else {
            failed(attempt, effectFailure, "its prepared transaction was rolled back");
        }
    }

    /** COMMIT/ROLLBACK PREPARED failed: the resolver settles the transaction later, or already did. */
    private void unfinished(Attempt attempt, boolean commit, Exception e) {
        LocksmithException failure = PgErrors.translate(e);
        Job job = attempt.job.job();
        if (PreparedTransactions.settledElsewhere(failure)) {
            log.warn(
                    "job {} ({}) of queue {}: {} was finished by another session (a resolver) before this worker's {}; "
                            + "keep resolveOlderThan above the longest side effect",
                    job.id(),
                    job.kind(),
                    job.queue(),
                    attempt.job.gid(),
                    commit ? "COMMIT PREPARED" : "ROLLBACK PREPARED",
                    e);
        } else {
            log.warn(
                    "job {} ({}) of queue {}: {} {} failed; the transaction stays prepared and the job locked until a "
                            + "resolver settles it by asking the SideEffectCheck",
                    job.id(),
                    job.kind(),
                    job.queue(),
                    commit ? "COMMIT PREPARED" : "ROLLBACK PREPARED",
                    attempt.job.gid(),
                    e);
        }
        attempt.handling.error(e);
    }

    /**
     * Counts the failed attempt of a job whose transaction was rolled back (before PREPARE, or with
     * ROLLBACK PREPARED), logs it, and ends the handler's observation with the failure.
     */
    private void failed(Attempt attempt, @Nullable Throwable error, @Nullable String rolledBack) {
        Throwable cause = Objects.requireNonNull(error, "error");
        Job job = attempt.job.job();
        FailResult result = null;
        try {
            JobControl control = Controls.find(cause);
            result = connections.autoCommit(ctx -> control == null
                    ? engine.twoPhase.fail(ctx, job, ErrorTexts.describe(cause))
                    : engine.twoPhase.settle(ctx, job, control));
            runtime.processed(1);
            if (result.outcome() == FailResult.Outcome.LEASE_LOST) {
                log.atLevel(settings.handlerFailureLogLevel())
                        .setCause(cause)
                        .log(
                                "job {} ({}) of queue {} failed, attempt {}{}; not recorded: another claimer took the "
                                        + "job meanwhile (its hold of {} ran out)",
                                job.id(),
                                job.kind(),
                                job.queue(),
                                job.attempts(),
                                rolledBack == null ? "" : "; " + rolledBack,
                                hold);
            } else {
                JobLogging.handlerFailed(log, settings.handlerFailureLogLevel(), job, job.attempts(), cause, result);
            }
        } catch (RuntimeException recordFailure) {
            recordFailure.addSuppressed(cause);
            log.warn(
                    "job {} ({}) of queue {} failed, attempt {}; the failure could not be recorded: the job runs again "
                            + "once its hold of {} runs out, its attempt counted",
                    job.id(),
                    job.kind(),
                    job.queue(),
                    job.attempts(),
                    hold,
                    recordFailure);
        } finally {
            Handling.end(attempt.handling, cause, result);
        }
    }

    private static void rollbackQuietly(Connection connection, Throwable failure) {
        try {
            connection.rollback();
        } catch (SQLException | RuntimeException rollbackFailure) {
            failure.addSuppressed(rollbackFailure);
        }
    }

    /** Back to auto-commit (no transaction is open: nothing is sent) and back to the pool. */
    private void release(Connection connection) {
        try {
            connection.setAutoCommit(true);
        } catch (SQLException | RuntimeException e) {
            log.debug("connection not reset to auto-commit; the pool discards it", e);
        }
        try {
            connection.close();
        } catch (SQLException | RuntimeException e) {
            log.debug("closing a connection failed", e);
        }
    }

    private void resolveRound(PreparedTransactions prepared) {
        try {
            ResolveResult result = resolver.resolve(prepared);
            if (result.committed() + result.rolledBack() + result.undecided() > 0) {
                log.info(
                        "resolver of queue {}: {} prepared transactions committed, {} rolled back, {} left",
                        settings.queue(),
                        result.committed(),
                        result.rolledBack(),
                        result.undecided());
            }
        } catch (RuntimeException | Error e) {
            log.warn("resolver of queue {} failed; trying again in {}", settings.queue(), resolveInterval, e);
        }
    }

    /** Reads the gid prefix and checks {@code max_prepared_transactions} once. */
    private PreparedTransactions transactions() {
        PreparedTransactions known = transactions;
        if (known != null) {
            return known;
        }
        synchronized (this) {
            if (transactions == null) {
                PreparedTransactions detected = connections.autoCommit(ctx -> PreparedTransactions.detect(ctx, schema));
                if (detected.maxPreparedTransactions() < settings.threads()) {
                    log.warn(
                            "max_prepared_transactions is {}, fewer than the {} threads of the two-phase worker of queue "
                                    + "{}: PREPARE TRANSACTION fails when they are all taken",
                            detected.maxPreparedTransactions(),
                            settings.threads(),
                            settings.queue());
                }
                transactions = detected;
            }
            return Objects.requireNonNull(transactions);
        }
    }
}

package dev.locksmith.jobs;

import dev.locksmith.PoolingMode;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.exception.PgErrors;
import dev.locksmith.internal.Durations;
import dev.locksmith.internal.Observing;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Runs jobs whose work has a side effect outside the database (a payment, an e-mail, a call to
 * another service) with two-phase commit, so that the job's database writes and its removal
 * from the queue commit exactly when the side effect happened. For each job, one of N threads:
 *
 * <ol>
 *   <li>claims it: one auto-committed statement ({@code FOR UPDATE SKIP LOCKED}, as every claim)
 *       counts the attempt ({@code attempts + 1}) and holds the job, moving its {@code run_at}
 *       ahead by {@code resolveOlderThan} (at least a minute) while it stays {@code pending};</li>
 *   <li>in a transaction, deletes it (as {@link JobQueue#claimInTransaction} does) and runs
 *       {@link TwoPhaseJobHandler#handleInTransaction};</li>
 *   <li>{@code PREPARE TRANSACTION '<gid>'}: the transaction, its writes and its row locks now
 *       belong to no session; they survive the worker's connection, and the worker itself;</li>
 *   <li>runs {@link TwoPhaseJobHandler#performSideEffect} outside any transaction, with the gid
 *       ({@link PreparedJob#gid()}) as the idempotency key;</li>
 *   <li>{@code COMMIT PREPARED '<gid>'} when it returned, {@code ROLLBACK PREPARED '<gid>'} when
 *       it threw.</li>
 * </ol>
 *
 * <p>Why the attempt is counted before the transaction: a rollback restores the job as it was
 * before the transaction, and a count written after the rollback races with claimers, which take
 * the job back in between (more than half of the time in a loaded test), so that backoff and
 * {@code max_attempts} would not hold. Counted first, the rolled-back job comes back with its
 * attempt counted and not due (the hold), and the worker then writes its backoff.
 * {@link Job#attempts()} of a job in hand is therefore the number of this attempt, 1 for the
 * first, as in leased mode.
 *
 * <p>One job per prepared transaction; the gid names it:
 * {@code locksmith:<system identifier>:<database oid>:<schema>:<job id>}, unique on the cluster
 * (gids are cluster-wide) and, through the server's system identifier, beyond it, and the same
 * for every attempt of the job (the external system sees the same key when an attempt is
 * repeated). While the transaction is prepared, the job's row stays locked: claimers skip it,
 * and other sessions still read it as it was claimed.
 *
 * <p><b>The resolver.</b> If the worker dies, or its connection does, between
 * {@code PREPARE TRANSACTION} and {@code COMMIT PREPARED}, the transaction stays prepared (and
 * the job locked) until someone finishes it. Every worker runs a resolver: on {@link #start()},
 * then every {@code resolveInterval}, it lists the prepared transactions of this library, this
 * database, schema and queue in {@code pg_prepared_xacts} that are older than
 * {@code resolveOlderThan}, asks the {@link SideEffectCheck} whether each one's side effect
 * happened, and commits ({@link SideEffectStatus#HAPPENED}), rolls back
 * ({@link SideEffectStatus#NOT_HAPPENED}) or leaves it for the next round
 * ({@link SideEffectStatus#UNKNOWN}). Several resolvers at once are safe: the first to finish a
 * transaction wins, the others skip it. It never touches a prepared transaction it did not
 * create. Keep {@code resolveOlderThan} above the longest side effect: a resolver that finishes
 * the transaction of a worker still inside its side effect can only go by what the check sees,
 * and a side effect that lands after a {@code NOT_HAPPENED} answer is repeated by the next attempt
 * (under the same idempotency key, which is what keeps it once).
 *
 * <p><b>What happens on each failure.</b>
 * <ul>
 *   <li>{@code handleInTransaction} throws, or {@code PREPARE TRANSACTION} fails, or the side
 *       effect throws ({@code ROLLBACK PREPARED}): the job's writes roll back and the failure is
 *       recorded as {@link TransactionalWorker} records a failed job: {@code last_error}, and
 *       {@code run_at} after the queue's retry backoff ({@link Builder#queueConfig}), or
 *       {@code failed} once {@code max_attempts} is used; logged at
 *       {@link Builder#handlerFailureLogLevel}, at ERROR when it failed for good.</li>
 *   <li>{@code PREPARE} found every {@code max_prepared_transactions} slot in use: the server's
 *       capacity, not the job's failure; the job goes back with its attempt uncounted, a WARN says
 *       so, and the thread waits a poll interval before it claims again.</li>
 *   <li>{@code COMMIT PREPARED} or {@code ROLLBACK PREPARED} fails (the connection died): logged
 *       at WARN; the transaction stays prepared and the resolver settles it by asking the check.
 *       A transaction the resolver rolls back is recorded as failed too.</li>
 *   <li>The worker's JVM dies after {@code PREPARE}: the resolvers of the queue's other workers, or
 *       of this one when it starts again, settle what it left prepared. Before {@code PREPARE}:
 *       the job is claimable again when its hold runs out, its attempt counted (a claim that finds
 *       a job past its last attempt fails it).</li>
 * </ul>
 *
 * <p><b>Requirements.</b> The server must allow prepared transactions:
 * {@code max_prepared_transactions} is 0 by default, and {@link #start()} (and
 * {@link #resolveNow()}) fail with a message saying how to set it; it needs a server restart,
 * and at least as many as all two-phase threads on the server. Workers and resolvers must
 * connect as the same role (only the role that prepared a transaction, or a superuser, can
 * finish it). A prepared transaction holds back vacuum's horizon like an open one, which is one
 * more reason to keep side effects short and resolvers running.
 *
 * <p><b>Connections.</b> Each step borrows a connection and gives it back at once: none is held
 * while a side effect or a check runs. At most {@code threads + 1} at the same time (one per
 * thread and one for the resolver), one more held for {@code LISTEN}. A prepared transaction is
 * not tied to a session, so this works through PgBouncer in transaction pooling mode (with
 * {@code listen(false)} and {@link PoolingMode#TRANSACTION}).
 */
public final class TwoPhaseWorker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TwoPhaseWorker.class);

    /** The shortest hold of a claimed job (see the class description): {@code resolveOlderThan}, at least this. */
    private static final Duration MIN_HOLD = Duration.ofMinutes(1);

    private final TwoPhaseConnections connections;
    private final DataSource dataSource;
    private final String schema;
    private final JobQueue queue;
    private final Claim claim;
    private final TwoPhaseJobHandler handler;
    private final Duration pollInterval;
    private final Duration resolveInterval;
    private final Duration hold;
    private final boolean listen;
    private final Level handlerFailureLogLevel;
    private final Observing observing;
    private final Seam seam;
    private final PreparedJobResolver resolver;
    private final QueueNotifications notifications;
    private final List<Thread> threads = new ArrayList<>();
    private final Thread resolverThread;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicLong processed = new AtomicLong();
    private final AtomicInteger live = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wakeUp = lock.newCondition();
    private long wakeGeneration;
    private volatile @Nullable PreparedTransactions transactions;

    /** Test seam (not API): called between the steps of a job, on its worker thread. */
    interface Seam {
        /** Does nothing. */
        Seam NONE = new Seam() {};

        /**
         * After {@code PREPARE TRANSACTION}, before the side effect, with the server process id of
         * the connection that prepared (back in the pool by now).
         */
        default void afterPrepare(PreparedJob job, int backendPid) {}

        /**
         * Just before {@code COMMIT PREPARED} ({@code commit}) or {@code ROLLBACK PREPARED}, with
         * the server process id of the connection about to send it.
         */
        default void beforeFinish(PreparedJob job, boolean commit, int backendPid) {}
    }

    private TwoPhaseWorker(Builder b) {
        this.dataSource = b.connections.dataSource();
        DSLContext dsl = dev.locksmith.TableSchema.using(b.connections.dsl(), b.schema);
        this.connections = new TwoPhaseConnections(dataSource, dsl);
        this.schema = b.schema;
        // No NOTIFY from this queue: a transaction that sent one cannot be prepared.
        this.queue = new JobQueue(
                dsl, b.queueConfig.toBuilder().notifyOnEnqueue(false).build());
        this.claim = new Claim(b.queue, 1, b.shards);
        this.handler = b.handler;
        this.pollInterval = b.pollInterval;
        this.resolveInterval = b.resolveInterval;
        this.hold = b.resolveOlderThan.compareTo(MIN_HOLD) > 0 ? b.resolveOlderThan : MIN_HOLD;
        this.listen = b.listen;
        this.handlerFailureLogLevel = b.handlerFailureLogLevel;
        this.observing = Observing.of(dsl);
        this.seam = b.seam;
        this.resolver = new PreparedJobResolver(connections, queue, b.queue, b.check, b.resolveOlderThan, observing);
        this.notifications = new QueueNotifications(dataSource, b.queue, b.pollInterval, () -> {}, this::wakeAll);
        for (int i = 0; i < b.threads; i++) {
            threads.add(thread(this::loop, "locksmith-" + b.queue + "-2pc-" + i));
        }
        this.resolverThread = thread(this::resolveLoop, "locksmith-" + b.queue + "-2pc-resolver");
    }

    private Thread thread(Runnable body, String name) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.setUncaughtExceptionHandler(
                (thread, e) -> LOG.error("worker thread {} of queue {} died", thread.getName(), claim.queue(), e));
        return t;
    }

    /**
     * A builder for a worker on {@code queue}.
     *
     * @param dataSource where every connection comes from; must allow {@code threads + 2}
     *     connections ({@code threads + 1} without LISTEN)
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the database work and the side effect of each job
     * @param check asked by the resolver whether the side effect of a prepared job happened
     * @return a builder with the defaults: 4 threads, 1 s poll, LISTEN on, resolve transactions
     *     prepared more than 5 minutes ago, every minute
     * @throws IllegalArgumentException for an invalid queue name
     */
    public static Builder builder(
            DataSource dataSource, String queue, TwoPhaseJobHandler handler, SideEffectCheck check) {
        return new Builder(WorkerConnections.of(dataSource), queue, handler, check);
    }

    /**
     * A builder for a worker whose statements run with your jOOQ configuration: your
     * {@code Settings} and {@code ExecuteListener}s apply, and its connections come from the data
     * source behind the context's {@code DataSourceConnectionProvider}. The context's transaction
     * provider is not used: the worker manages its transactions on the connections itself, because
     * a prepared transaction is finished by {@code COMMIT PREPARED}, not {@code COMMIT}.
     *
     * @param dsl your context; its connection provider must be a
     *     {@link org.jooq.impl.DataSourceConnectionProvider}
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the database work and the side effect of each job
     * @param check asked by the resolver whether the side effect of a prepared job happened
     * @return a builder with the same defaults as
     *     {@link #builder(DataSource, String, TwoPhaseJobHandler, SideEffectCheck)}
     * @throws IllegalArgumentException for an invalid queue name, or a context whose connections
     *     do not come from a data source
     */
    public static Builder builder(DSLContext dsl, String queue, TwoPhaseJobHandler handler, SideEffectCheck check) {
        return new Builder(WorkerConnections.of(dsl), queue, handler, check);
    }

    /**
     * Checks that the server allows prepared transactions, runs one resolver round (so that what a
     * crashed predecessor left prepared is settled before new claims), then starts the threads and
     * the periodic resolver. A failure of that first round is logged and left to the next one.
     *
     * @return this worker, running
     * @throws IllegalStateException when the server has {@code max_prepared_transactions = 0}
     *     (the message says how to set it), when the jobs table is distributed by Citus, when the
     *     data source's pool is known to allow fewer
     *     connections than the worker needs, or when it was started before
     * @throws LocksmithException when the server cannot be reached
     */
    public TwoPhaseWorker start() {
        PoolSize.require(
                dataSource,
                threads.size() + 1 + (listen ? 1 : 0),
                "two-phase worker (with its resolver)",
                threads.size(),
                listen);
        PreparedTransactions prepared = transactions();
        if (connections.autoCommit(queue::distributedShards) > 0) {
            // Its later steps lock the job by id alone (a multi-shard lock, which Citus refuses),
            // and a prepared transaction spanning Citus nodes is Citus's own to resolve.
            throw new IllegalStateException("the two-phase worker does not run on Citus yet (the jobs table is "
                    + "distributed): use TransactionalWorker or JobWorker there");
        }
        if (!running.compareAndSet(false, true)) {
            throw new IllegalStateException("already started");
        }
        resolveRound(prepared);
        if (listen) {
            notifications.start();
        }
        threads.forEach(Thread::start);
        resolverThread.start();
        return this;
    }

    /**
     * Runs one resolver round now, on the calling thread, whether or not the worker was started:
     * this queue's prepared transactions older than {@code resolveOlderThan} are committed, rolled
     * back or left, as the {@link SideEffectCheck} answers. Call it outside any transaction of
     * your own: {@code COMMIT PREPARED} cannot run inside one.
     *
     * @return what the round did
     * @throws IllegalStateException when the server has {@code max_prepared_transactions = 0}
     * @throws LocksmithException when listing the prepared transactions failed
     */
    public ResolveResult resolveNow() {
        return resolver.resolve(transactions());
    }

    /** {@return jobs finished by this worker's threads so far: committed, or a failed attempt counted} */
    public long processed() {
        return processed.get();
    }

    /**
     * Threads running their loop now: the configured count while the worker runs, zero after
     * {@link #close()}.
     *
     * @return how many of the worker's job threads are in their loop
     */
    public int liveThreads() {
        return live.get();
    }

    /**
     * Stops claiming; each thread first finishes the job it has (its side effect, and
     * {@code COMMIT PREPARED} or {@code ROLLBACK PREPARED}), so a clean stop leaves nothing
     * prepared. Returns when all threads, and a resolver round in progress, have stopped.
     */
    @Override
    public void close() {
        if (!running.compareAndSet(true, false)) {
            return;
        }
        wakeAll();
        for (Thread t : threads) {
            join(t);
        }
        join(resolverThread);
        if (listen) {
            notifications.stop();
        }
    }

    private static void join(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
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
                if (detected.maxPreparedTransactions() < threads.size()) {
                    LOG.warn(
                            "max_prepared_transactions is {}, fewer than the {} threads of the two-phase worker of queue "
                                    + "{}: PREPARE TRANSACTION fails when they are all taken",
                            detected.maxPreparedTransactions(),
                            threads.size(),
                            claim.queue());
                }
                transactions = detected;
            }
            return Objects.requireNonNull(transactions);
        }
    }

    // ------------------------------------------------------------------ job threads

    private void loop() {
        live.incrementAndGet();
        try {
            PreparedTransactions prepared = transactions();
            while (running.get()) {
                boolean claimed;
                try {
                    claimed = runOne(prepared);
                } catch (RuntimeException | Error e) {
                    LOG.warn("two-phase worker of queue {} could not claim; trying again", claim.queue(), e);
                    claimed = false;
                }
                if (!claimed) {
                    awaitWake(pollInterval);
                }
            }
        } finally {
            live.decrementAndGet();
        }
    }

    /** One job, claim to commit; false when there was none to claim, or no slot to prepare it in. */
    private boolean runOne(PreparedTransactions prepared) {
        List<Job> claimed = connections.autoCommit(ctx -> queue.claimForTwoPhase(ctx, claim, hold));
        if (claimed.isEmpty()) {
            return false;
        }
        Job job = claimed.get(0);
        if (job.attempts() > job.maxAttempts()) {
            failExhausted(job);
            return true;
        }
        Attempt attempt = new Attempt(
                new PreparedJob(job, prepared.gid(job.id())), observing.start(new Operation.HandleJobs(claimed)));
        try {
            prepare(prepared, attempt);
            Throwable failure = attempt.failure;
            if (attempt.taken) {
                LOG.warn(
                        "job {} ({}) of queue {}: another claimer took it before this worker's transaction did (its hold "
                                + "of {} ran out); left to that claimer",
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
                    queue.releaseTwoPhase(ctx, job, pollInterval);
                    return null;
                });
                LOG.warn(
                        "job {} of queue {} is back in the queue, its attempt not counted: PREPARE TRANSACTION found "
                                + "all max_prepared_transactions ({}) in use; raise it, or check that resolvers run",
                        job.id(),
                        claim.queue(),
                        prepared.maxPreparedTransactions(),
                        failure);
                attempt.handling.error(failure);
                return false;
            } else {
                failed(attempt, failure, null);
            }
        } finally {
            attempt.mdc.close();
        }
        return true;
    }

    /** A claimed job on its way through the steps. */
    private static final class Attempt {
        final PreparedJob job;
        final JobLogging.Scope mdc;
        final Observation handling;
        /** What failed before the transaction was prepared; null once it is prepared. */
        @Nullable
        Throwable failure;

        /** The claim's hold ran out and another claimer took the job first. */
        boolean taken;

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
            if (!queue.takeTwoPhase(tx, attempt.job.job())) {
                attempt.taken = true;
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
            connections.autoCommit(ctx -> queue.failExhaustedTwoPhase(ctx, job));
            LOG.error(
                    "job {} ({}) of queue {} failed for good: its last attempt ({} of {}) did not finish, its worker "
                            + "died before recording the outcome",
                    job.id(),
                    job.kind(),
                    job.queue(),
                    job.maxAttempts(),
                    job.maxAttempts());
        } catch (RuntimeException e) {
            LOG.warn("job {} of queue {} is past its last attempt but could not be failed", job.id(), job.queue(), e);
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
            processed.incrementAndGet();
            attempt.handling.end(Outcome.OK);
            observing.jobEvent(JobEvent.COMPLETED, attempt.job.job());
        } else {
            failed(attempt, effectFailure, "its prepared transaction was rolled back");
        }
    }

    /** COMMIT/ROLLBACK PREPARED failed: the resolver settles the transaction later, or already did. */
    private void unfinished(Attempt attempt, boolean commit, Exception e) {
        LocksmithException failure = PgErrors.translate(e);
        Job job = attempt.job.job();
        if (PreparedTransactions.settledElsewhere(failure)) {
            LOG.warn(
                    "job {} ({}) of queue {}: {} was finished by another session (a resolver) before this worker's {}; "
                            + "keep resolveOlderThan above the longest side effect",
                    job.id(),
                    job.kind(),
                    job.queue(),
                    attempt.job.gid(),
                    commit ? "COMMIT PREPARED" : "ROLLBACK PREPARED",
                    e);
        } else {
            LOG.warn(
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
        try {
            FailResult result = connections.autoCommit(ctx -> queue.failTwoPhase(ctx, job, JobLogging.describe(cause)));
            processed.incrementAndGet();
            if (result.outcome() == FailResult.Outcome.LEASE_LOST) {
                LOG.atLevel(handlerFailureLogLevel)
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
                JobLogging.handlerFailed(LOG, handlerFailureLogLevel, job, job.attempts(), cause, result);
            }
        } catch (RuntimeException recordFailure) {
            recordFailure.addSuppressed(cause);
            LOG.warn(
                    "job {} ({}) of queue {} failed, attempt {}; the failure could not be recorded: the job runs again "
                            + "once its hold of {} runs out, its attempt counted",
                    job.id(),
                    job.kind(),
                    job.queue(),
                    job.attempts(),
                    hold,
                    recordFailure);
        } finally {
            attempt.handling.error(cause);
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
    private static void release(Connection connection) {
        try {
            connection.setAutoCommit(true);
        } catch (SQLException | RuntimeException e) {
            LOG.debug("connection not reset to auto-commit; the pool discards it", e);
        }
        try {
            connection.close();
        } catch (SQLException | RuntimeException e) {
            LOG.debug("closing a connection failed", e);
        }
    }

    // ------------------------------------------------------------------ resolver thread

    private void resolveLoop() {
        while (running.get()) {
            awaitResolverDue();
            if (running.get()) {
                resolveRound(transactions());
            }
        }
    }

    /** Waits {@code resolveInterval}, or until the worker stops; notifications do not end the wait. */
    private void awaitResolverDue() {
        long deadline = System.nanoTime() + resolveInterval.toNanos();
        lock.lock();
        try {
            for (long nanos = resolveInterval.toNanos(); running.get() && nanos > 0; ) {
                wakeUp.awaitNanos(nanos);
                nanos = deadline - System.nanoTime();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    private void resolveRound(PreparedTransactions prepared) {
        try {
            ResolveResult result = resolver.resolve(prepared);
            if (result.committed() + result.rolledBack() + result.undecided() > 0) {
                LOG.info(
                        "resolver of queue {}: {} prepared transactions committed, {} rolled back, {} left",
                        claim.queue(),
                        result.committed(),
                        result.rolledBack(),
                        result.undecided());
            }
        } catch (RuntimeException | Error e) {
            LOG.warn("resolver of queue {} failed; trying again in {}", claim.queue(), resolveInterval, e);
        }
    }

    // ------------------------------------------------------------------ waiting

    private void wakeAll() {
        lock.lock();
        try {
            wakeGeneration++;
            wakeUp.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void awaitWake(Duration timeout) {
        lock.lock();
        try {
            long generation = wakeGeneration;
            long nanos = timeout.toNanos();
            while (generation == wakeGeneration && running.get() && nanos > 0) {
                nanos = wakeUp.awaitNanos(nanos);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    /** Builds a {@link TwoPhaseWorker}; settings are validated when set. */
    public static final class Builder {
        private final WorkerConnections connections;
        private final String queue;
        private final TwoPhaseJobHandler handler;
        private final SideEffectCheck check;
        private int threads = 4;
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration resolveOlderThan = Duration.ofMinutes(5);
        private Duration resolveInterval = Duration.ofMinutes(1);
        private boolean listen = true;
        private String schema = dev.locksmith.TableSchema.DEFAULT;
        private PoolingMode poolingMode = PoolingMode.SESSION;
        private Set<Integer> shards = Set.of();
        private JobQueueConfig queueConfig = JobQueueConfig.defaults();
        private Level handlerFailureLogLevel = Level.WARN;
        private Seam seam = Seam.NONE;

        private Builder(
                WorkerConnections connections, String queue, TwoPhaseJobHandler handler, SideEffectCheck check) {
            this.connections = connections;
            NewJob.requireName("queue", queue, 128);
            this.queue = queue;
            this.handler = Objects.requireNonNull(handler, "handler");
            this.check = Objects.requireNonNull(check, "check");
        }

        /**
         * Threads, each working one job at a time; default 4. Each prepared transaction takes one
         * of the server's {@code max_prepared_transactions} until it is finished.
         *
         * @param threads 1 to 1,000
         * @return this builder
         * @throws IllegalArgumentException when out of range
         */
        public Builder threads(int threads) {
            this.threads = JobQueue.requireThreads(threads);
            return this;
        }

        /**
         * Longest idle wait without a notification; default 1 s. With LISTEN off, also the
         * longest delay before a new job is seen.
         *
         * @param pollInterval positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = JobQueue.requirePositive("pollInterval", pollInterval);
            return this;
        }

        /**
         * How long a transaction must have been prepared (database clock) before the resolver
         * settles it; default 5 minutes. Keep it above the longest side effect plus the time to
         * commit: a worker still inside its side effect must not be second-guessed. Zero settles
         * everything prepared, which only a resolver that knows no worker of the queue is running
         * may do (tests, a tool run after the workers stopped). It is also how long a claim holds
         * its job (at least a minute): a worker that dies before {@code PREPARE} leaves the job
         * claimable again after that.
         *
         * @param resolveOlderThan zero or more
         * @return this builder
         * @throws IllegalArgumentException when negative
         */
        public Builder resolveOlderThan(Duration resolveOlderThan) {
            this.resolveOlderThan = Durations.nonNegative("resolveOlderThan", resolveOlderThan);
            return this;
        }

        /**
         * How often the resolver runs after the round of {@link TwoPhaseWorker#start()}; default
         * 1 minute.
         *
         * @param resolveInterval positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder resolveInterval(Duration resolveInterval) {
            this.resolveInterval = JobQueue.requirePositive("resolveInterval", resolveInterval);
            return this;
        }

        /**
         * Use LISTEN/NOTIFY wake-up (default true): idle threads wake when a job is enqueued, at
         * the cost of one more connection held for the worker's life.
         *
         * @param listen false to rely on polling alone (required behind a transaction pooler)
         * @return this builder
         */
        public Builder listen(boolean listen) {
            this.listen = listen;
            return this;
        }

        /**
         * How the data source's connections reach the server; default {@link PoolingMode#SESSION}.
         * With {@link PoolingMode#TRANSACTION} (PgBouncer transaction pooling) LISTEN cannot work,
         * and {@link #build()} refuses unless {@code listen(false)} was set; prepared transactions
         * work there, as they belong to no session.
         *
         * @param poolingMode the mode of the data source's connections
         * @return this builder
         */
        public Builder poolingMode(PoolingMode poolingMode) {
            this.poolingMode = Objects.requireNonNull(poolingMode, "poolingMode");
            return this;
        }

        /**
         * Claim only from these shards; default all. The resolver settles the queue's jobs of
         * every shard.
         *
         * @param shards shard numbers, none negative; empty means all (checked by {@link #build()})
         * @return this builder
         */
        public Builder shards(Set<Integer> shards) {
            this.shards = Set.copyOf(Objects.requireNonNull(shards, "shards"));
            return this;
        }

        /**
         * Retry backoff for failed attempts; default {@link JobQueueConfig#defaults()}. Its
         * {@code notifyOnEnqueue} is ignored: the worker sends no NOTIFY (a transaction that did
         * cannot be prepared).
         *
         * @param queueConfig the queue's settings
         * @return this builder
         */
        public Builder queueConfig(JobQueueConfig queueConfig) {
            this.queueConfig = Objects.requireNonNull(queueConfig, "queueConfig");
            return this;
        }

        /**
         * The schema the locksmith tables were migrated to; default
         * {@value dev.locksmith.TableSchema#DEFAULT}. It is part of every gid, so that workers
         * of two schemas in one database never finish each other's transactions.
         *
         * @param schema a lower-case unquoted identifier
         * @return this builder
         * @throws IllegalArgumentException for an invalid schema name
         */
        public Builder schema(String schema) {
            this.schema = SchemaMapping.requireName(schema);
            return this;
        }

        /**
         * The level at which a failed attempt is logged, with its stack trace, when the job will
         * be retried (default {@link Level#WARN}). A job that fails for good is logged at ERROR.
         *
         * @param level an SLF4J level
         * @return this builder
         */
        public Builder handlerFailureLogLevel(Level level) {
            this.handlerFailureLogLevel = Objects.requireNonNull(level, "handlerFailureLogLevel");
            return this;
        }

        /** Test seam (not API). */
        Builder seam(Seam seam) {
            this.seam = Objects.requireNonNull(seam, "seam");
            return this;
        }

        /**
         * The worker, not yet started; nothing is sent to the server until {@link #start()} or
         * {@link #resolveNow()}.
         *
         * @return a new worker; call {@link TwoPhaseWorker#start()}
         * @throws IllegalArgumentException for shards or other settings out of range
         * @throws IllegalStateException for LISTEN wake-ups with {@link PoolingMode#TRANSACTION}
         */
        public TwoPhaseWorker build() {
            JobQueue.requireListenAllowed(listen, poolingMode);
            return new TwoPhaseWorker(this);
        }
    }
}

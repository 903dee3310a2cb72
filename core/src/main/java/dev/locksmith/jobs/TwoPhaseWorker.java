package dev.locksmith.jobs;

import dev.locksmith.Locksmith;
import dev.locksmith.exception.LocksmithException;
import dev.locksmith.internal.Durations;
import dev.locksmith.jobs.runtime.TwoPhaseMode;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 *       {@code run_at} after the queue's retry backoff ({@link JobQueueConfig#retryBackoff()}), or
 *       {@code failed} once {@code max_attempts} is used; logged at
 *       {@link WorkerBuilder#handlerFailureLogLevel}, at ERROR when it failed for good.</li>
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
 * {@code listen(false)} and {@code PoolingMode.TRANSACTION}).
 *
 * <p><b>Shutdown.</b> {@link #close()} stops claiming; each thread first finishes the job it has
 * (its side effect, and {@code COMMIT PREPARED} or {@code ROLLBACK PREPARED}), so a clean stop
 * leaves nothing prepared. Side effects are not interrupted (one cut short would be repeated under
 * its idempotency key): a thread still inside one after the shutdown grace is reported (logged at
 * WARN, counted by {@link #liveThreads()}) and finishes its job on its own; if the JVM exits
 * first, the job's prepared transaction is settled by a resolver.
 */
public final class TwoPhaseWorker extends RuntimeWorker {

    private static final Logger LOG = LoggerFactory.getLogger(TwoPhaseWorker.class);

    private final TwoPhaseMode mode;

    private TwoPhaseWorker(Builder b) {
        super(b, b.runtime(LOG, 1));
        this.mode = new TwoPhaseMode(
                runtime,
                b.environment().schema(),
                b.handler,
                b.check,
                b.resolveOlderThan,
                b.resolveInterval,
                b.seam,
                PreparedJob::new);
    }

    /**
     * A builder for a worker on {@code queue} of {@code jobs}, in its environment and with its
     * settings (retry backoff).
     *
     * @param jobs the queue: its environment's data source gives every connection, at most
     *     {@code threads + 2} at once ({@code threads + 1} without LISTEN)
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the database work and the side effect of each job
     * @param check asked by the resolver whether the side effect of a prepared job happened
     * @return a builder with the defaults: 4 threads, 1 s poll, LISTEN on, resolve transactions
     *     prepared more than 5 minutes ago, every minute
     * @throws IllegalArgumentException for an invalid queue name, or an environment whose connections
     *     do not come from a {@code DataSource} (a worker holds connections of its own)
     */
    public static Builder builder(JobQueue jobs, String queue, TwoPhaseJobHandler handler, SideEffectCheck check) {
        return new Builder(jobs, queue, handler, check);
    }

    /**
     * A builder with every default environment and queue setting, its connections from
     * {@code dataSource}: {@code builder(new JobQueue(Locksmith.of(dataSource)), ...)}.
     *
     * @param dataSource where every connection comes from
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the database work and the side effect of each job
     * @param check asked by the resolver whether the side effect of a prepared job happened
     * @return a builder with the defaults of {@link #builder(JobQueue, String, TwoPhaseJobHandler,
     *     SideEffectCheck)}
     * @throws IllegalArgumentException for an invalid queue name, or an environment whose connections
     *     do not come from a {@code DataSource} (a worker holds connections of its own)
     */
    public static Builder builder(
            DataSource dataSource, String queue, TwoPhaseJobHandler handler, SideEffectCheck check) {
        return builder(new JobQueue(Locksmith.of(dataSource)), queue, handler, check);
    }

    /**
     * A builder whose statements run with your jOOQ configuration ({@code builder(new
     * JobQueue(dsl), ...)}): your {@code Settings} and {@code ExecuteListener}s apply, and its
     * connections come from the data source behind the context's
     * {@code DataSourceConnectionProvider}. The context's transaction provider is not used: the
     * worker manages its transactions on the connections itself, because a prepared transaction is
     * finished by {@code COMMIT PREPARED}, not {@code COMMIT}.
     *
     * @param dsl your context, or {@link Locksmith#dsl()}
     * @param queue the queue to work, 1 to 128 characters, not blank
     * @param handler the database work and the side effect of each job
     * @param check asked by the resolver whether the side effect of a prepared job happened
     * @return a builder with the defaults of {@link #builder(JobQueue, String, TwoPhaseJobHandler,
     *     SideEffectCheck)}
     * @throws IllegalArgumentException for an invalid queue name, or an environment whose connections
     *     do not come from a {@code DataSource} (a worker holds connections of its own)
     */
    public static Builder builder(DSLContext dsl, String queue, TwoPhaseJobHandler handler, SideEffectCheck check) {
        return builder(new JobQueue(dsl), queue, handler, check);
    }

    /**
     * Checks that the server allows prepared transactions, runs one resolver round (so that what a
     * crashed predecessor left prepared is settled before new claims), then starts the threads and
     * the periodic resolver. A failure of that first round is logged and left to the next one.
     *
     * @return this worker, running
     * @throws IllegalStateException when the server has {@code max_prepared_transactions = 0}
     *     (the message says how to set it), when the jobs table is distributed by Citus, when the
     *     data source's pool is known to allow fewer connections than the worker needs, or when it
     *     was started before
     * @throws LocksmithException when the server cannot be reached
     */
    @Override
    public TwoPhaseWorker start() {
        runtime.start(mode);
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
        return mode.resolveNow();
    }

    /** Builds a {@link TwoPhaseWorker}: the settings of {@link WorkerBuilder}, and the resolver's. */
    public static final class Builder extends WorkerBuilder<Builder> {
        private final TwoPhaseJobHandler handler;
        private final SideEffectCheck check;
        private Duration resolveOlderThan = Duration.ofMinutes(5);
        private Duration resolveInterval = Duration.ofMinutes(1);
        private TwoPhaseMode.Seam seam = TwoPhaseMode.Seam.NONE;

        private Builder(JobQueue jobs, String queue, TwoPhaseJobHandler handler, SideEffectCheck check) {
            super(jobs, queue);
            this.handler = Objects.requireNonNull(handler, "handler");
            this.check = Objects.requireNonNull(check, "check");
        }

        @Override
        Builder self() {
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
            this.resolveInterval = Durations.positive("resolveInterval", resolveInterval);
            return this;
        }

        /** Test seam (not API). */
        Builder seam(TwoPhaseMode.Seam seam) {
            this.seam = Objects.requireNonNull(seam, "seam");
            return this;
        }

        /**
         * The worker, not yet started; nothing is sent to the server until {@link #start()} or
         * {@link #resolveNow()}.
         *
         * @return a new worker; call {@link TwoPhaseWorker#start()}
         * @throws IllegalArgumentException for shards out of range, or an environment whose
         *     connections do not come from a {@code DataSource}
         * @throws IllegalStateException for LISTEN wake-ups under {@code PoolingMode.TRANSACTION}
         */
        @Override
        public TwoPhaseWorker build() {
            return new TwoPhaseWorker(this);
        }
    }
}

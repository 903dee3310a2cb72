package dev.locksmith.jobs;

import dev.locksmith.PoolingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link BatchJobHandler} in transactional mode: each of N threads repeatedly opens a
 * transaction, claims up to {@code batchSize} jobs with
 * {@link JobQueue#claimInTransaction(DSLContext, Claim)}, hands them to the handler, and commits.
 * Exactly once for work done in the same database; no leases, heartbeats or rescue are needed,
 * because a crashed worker's transaction simply rolls back.
 *
 * <p>Batching is the throughput lever: one round trip claims many jobs. The trade-offs: a batch
 * succeeds or fails as a whole, and a job whose handler always throws is retried forever (there
 * is no attempt count in this mode); use {@link JobWorker} (leased mode) when jobs need
 * {@code max_attempts} and backoff. Idle threads wait for a NOTIFY, and poll regardless.
 */
public final class TransactionalWorker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionalWorker.class);

    private final DSLContext dsl;
    private final JobQueue queue;
    private final Claim claim;
    private final BatchJobHandler handler;
    private final Duration pollInterval;
    private final QueueNotifications notifications;
    private final boolean listen;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicLong processed = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wakeUp = lock.newCondition();
    private long wakeGeneration;

    private TransactionalWorker(Builder b) {
        this.dsl = DSL.using(b.dataSource, SQLDialect.POSTGRES);
        this.queue = new JobQueue(dsl, JobQueueConfig.defaults().withNotifyOnEnqueue(false));
        this.claim = new Claim(b.queue, b.batchSize, b.shards);
        this.handler = b.handler;
        this.pollInterval = b.pollInterval;
        this.listen = b.listen;
        this.notifications = new QueueNotifications(b.dataSource, b.queue, b.pollInterval, () -> { }, this::wakeAll);
        for (int i = 0; i < b.threads; i++) {
            Thread t = new Thread(this::loop, "locksmith-" + b.queue + "-tx-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
    }

    /** A builder for a worker on {@code queue} running {@code handler}. */
    public static Builder builder(DataSource dataSource, String queue, BatchJobHandler handler) {
        return new Builder(dataSource, queue, handler);
    }

    /** Starts the threads; returns at once. */
    public TransactionalWorker start() {
        if (!running.compareAndSet(false, true)) {
            throw new IllegalStateException("already started");
        }
        if (listen) {
            notifications.start();
        }
        threads.forEach(Thread::start);
        return this;
    }

    /** Jobs whose batch committed so far. */
    public long processed() {
        return processed.get();
    }

    /** Stops after each thread's current batch commits or rolls back; returns when all have stopped. */
    @Override
    public void close() {
        if (!running.compareAndSet(true, false)) {
            return;
        }
        wakeAll();
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (listen) {
            notifications.stop();
        }
    }

    private void loop() {
        while (running.get()) {
            int claimed;
            try {
                claimed = dsl.transactionResult(c -> {
                    List<Job> jobs = queue.claimInTransaction(c.dsl(), claim);
                    if (!jobs.isEmpty()) {
                        handler.handle(jobs, c.dsl());
                    }
                    return jobs.size();
                });
            } catch (RuntimeException e) {
                LOG.warn("locksmith: batch on {} rolled back, its jobs are back in the queue: {}", claim.queue(),
                        e.toString());
                claimed = 0;
            }
            processed.addAndGet(claimed);
            if (claimed < claim.limit()) {
                awaitWake();
            }
        }
    }

    private void wakeAll() {
        lock.lock();
        try {
            wakeGeneration++;
            wakeUp.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void awaitWake() {
        lock.lock();
        try {
            long generation = wakeGeneration;
            long nanos = pollInterval.toNanos();
            while (generation == wakeGeneration && running.get() && nanos > 0) {
                nanos = wakeUp.awaitNanos(nanos);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    /** Builds a {@link TransactionalWorker}; settings are validated when set. */
    public static final class Builder {
        private final DataSource dataSource;
        private final String queue;
        private final BatchJobHandler handler;
        private int threads = 4;
        private int batchSize = 10;
        private Duration pollInterval = Duration.ofSeconds(1);
        private boolean listen = true;
        private PoolingMode poolingMode = PoolingMode.SESSION;
        private Set<Integer> shards = Set.of();

        private Builder(DataSource dataSource, String queue, BatchJobHandler handler) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
            NewJob.requireName("queue", queue, 128);
            this.queue = queue;
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /** Threads, each with its own transaction; 1 to 1,000, default 4. */
        public Builder threads(int threads) {
            this.threads = JobQueue.requireThreads(threads);
            return this;
        }

        /** Jobs claimed per transaction; 1 to {@link Claim#MAX_LIMIT}, default 10. */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > Claim.MAX_LIMIT) {
                throw new IllegalArgumentException("batchSize must be between 1 and " + Claim.MAX_LIMIT + ", was " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /** Longest idle wait without a notification; default 1 s. */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = JobQueue.requirePositive("pollInterval", pollInterval);
            return this;
        }

        /** Use LISTEN/NOTIFY wake-up (default true). */
        public Builder listen(boolean listen) {
            this.listen = listen;
            return this;
        }

        /**
         * How the data source's connections reach the server; default {@link PoolingMode#SESSION}.
         * With {@link PoolingMode#TRANSACTION} (PgBouncer transaction pooling) LISTEN cannot
         * work, and {@link #build()} refuses unless {@code listen(false)} was set.
         */
        public Builder poolingMode(PoolingMode poolingMode) {
            this.poolingMode = Objects.requireNonNull(poolingMode, "poolingMode");
            return this;
        }

        /** Claim only from these shards; default all. */
        public Builder shards(Set<Integer> shards) {
            this.shards = Set.copyOf(Objects.requireNonNull(shards, "shards"));
            return this;
        }

        /**
         * The worker, not yet started.
         *
         * @throws IllegalStateException for LISTEN wake-ups with {@link PoolingMode#TRANSACTION}
         */
        public TransactionalWorker build() {
            if (listen) {
                poolingMode.requireSessionState("LISTEN wake-up", "set listen(false) and rely on polling, "
                        + "or give the worker a data source that connects to the server directly");
            }
            return new TransactionalWorker(this);
        }
    }
}

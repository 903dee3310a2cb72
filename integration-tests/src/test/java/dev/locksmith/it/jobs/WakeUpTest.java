package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.PoolingMode;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.WakeUp;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * How an enqueue wakes workers. By default ({@link WakeUp#AFTER_COMMIT}) at most one producer
 * per data source at a time sends {@code NOTIFY} in its own transaction (whose commit takes
 * PostgreSQL's database-wide notify lock); the others' signals come after their commits, from
 * another session, and none after a rollback. A transaction locksmith cannot see still wakes
 * workers, from inside. Without LISTEN a worker polls adaptively; {@code listenVia} listens on a
 * direct connection beside a transaction-pooled one.
 *
 * <p>Which session sent a notification is its backend pid: the producer's transactions run on a
 * second pool, so a signal the queue's sender sends never comes from the producer's session, and
 * one the producer carries always does.
 */
class WakeUpTest extends DatabaseTest {

    private static final Duration WAIT = Duration.ofMinutes(2);

    private HikariDataSource producerPool;
    private Locksmith producers;
    private JobQueue queue;

    @BeforeAll
    void producerPool() {
        producerPool = TestPostgres.pool(database, 4);
        producers = Locksmith.builder(producerPool).build();
    }

    @AfterAll
    void closeProducerPool() {
        if (producerPool != null) {
            producerPool.close();
        }
    }

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(Locksmith.builder(pool).build());
    }

    /** A session LISTENing on the queue's channel, collecting (queue, sender pid). */
    private final class Listener implements AutoCloseable {
        final Connection connection;
        final List<PGNotification> received = new ArrayList<>();

        Listener() throws Exception {
            connection = pool.getConnection();
            try (Statement s = connection.createStatement()) {
                s.execute("LISTEN " + JobQueue.CHANNEL);
            }
        }

        /** Waits for a notification naming {@code queue}; returns it. */
        PGNotification next(String queue) throws Exception {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < deadline) {
                for (PGNotification n : received) {
                    if (n.getParameter().equals(queue)) {
                        return n;
                    }
                }
                PGNotification[] more = connection.unwrap(PGConnection.class).getNotifications(100);
                if (more != null) {
                    received.addAll(List.of(more));
                }
            }
            throw new AssertionError("no notification for " + queue + " within " + WAIT);
        }

        List<String> queues() {
            return received.stream().map(PGNotification::getParameter).toList();
        }

        @Override
        public void close() throws Exception {
            try (Statement s = connection.createStatement()) {
                s.execute("UNLISTEN *");
            }
            connection.close();
        }
    }

    private static int pid(DSLContext tx) {
        return tx.fetchSingle("SELECT pg_backend_pid()").get(0, Integer.class);
    }

    @Test
    void aLoneProducerCarriesTheNotifyInItsOwnTransaction() throws Exception {
        try (Listener listener = new Listener()) {
            // No producer carries within 2 ms of the last notification, or while a grant an earlier
            // test's transaction took has not lapsed (1 s): tries until one carries.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (int attempt = 0; ; attempt++) {
                String name = "carried-" + attempt;
                int[] producer = new int[1];
                producers.dsl().transaction(c -> {
                    producer[0] = pid(c.dsl());
                    queue.enqueue(c.dsl(), NewJob.of(name, "k"));
                });
                if (listener.next(name).getPID() == producer[0]) {
                    return;
                }
                assertThat(System.nanoTime())
                        .as("a producer alone never sent the NOTIFY in its own transaction")
                        .isLessThan(deadline);
                Thread.sleep(10);
            }
        }
    }

    /**
     * Of two producers whose transactions overlap, at most one sends the NOTIFY in its own
     * transaction (so at most one commit per data source takes the notify lock); the other's
     * signal comes after its commit from another session, and neither is lost. With
     * {@link WakeUp#IN_TRANSACTION} both carry their own, which this test tells apart.
     */
    @Test
    void ofTwoOverlappingProducersAtMostOneCarriesTheNotifyAndNoWakeUpIsLost() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (int attempt = 0; ; attempt++) {
            boolean[] carried = overlappingProducers(queue, "default-" + attempt);
            if (carried[0]) {
                assertThat(carried[1])
                        .as("the second producer carried its NOTIFY while the first held the grant")
                        .isFalse();
                break;
            }
            // the first producer came within 2 ms of another notification, or of a lapsing grant
            assertThat(System.nanoTime()).as("the first producer never carried").isLessThan(deadline);
            Thread.sleep(10);
        }
        JobQueue inside = new JobQueue(
                Locksmith.builder(pool).build(),
                JobQueueConfig.builder().wakeUp(WakeUp.IN_TRANSACTION).build());
        assertThat(overlappingProducers(inside, "inside")).containsExactly(true, true);
    }

    /**
     * A first producer enqueues and holds its transaction open while a second enqueues and
     * commits; then the first commits. Returns, once both notifications arrived, whether each came
     * from its producer's own session.
     */
    private boolean[] overlappingProducers(JobQueue producing, String prefix) throws Exception {
        try (Listener listener = new Listener()) {
            CountDownLatch enqueued = new CountDownLatch(1);
            CountDownLatch commit = new CountDownLatch(1);
            int[] pids = new int[2];
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread first = new Thread(() -> {
                try {
                    producers.dsl().transaction(c -> {
                        pids[0] = pid(c.dsl());
                        producing.enqueue(c.dsl(), NewJob.of(prefix + "-first", "k"));
                        enqueued.countDown();
                        if (!commit.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                            throw new IllegalStateException("never told to commit");
                        }
                    });
                } catch (Throwable t) {
                    failed.set(t);
                    enqueued.countDown();
                }
            });
            first.start();
            assertThat(enqueued.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            producers.dsl().transaction(c -> {
                pids[1] = pid(c.dsl());
                producing.enqueue(c.dsl(), NewJob.of(prefix + "-second", "k"));
            });
            PGNotification second = listener.next(prefix + "-second");
            commit.countDown();
            first.join(WAIT.toMillis());
            assertThat(failed.get()).as("the first producer's transaction").isNull();
            PGNotification firstSignal = listener.next(prefix + "-first");
            return new boolean[] {firstSignal.getPID() == pids[0], second.getPID() == pids[1]};
        }
    }

    /**
     * An enqueue on another connection, in a transaction locksmith cannot see end, made while a
     * jOOQ transaction of this thread is open, does not carry the NOTIFY: the open transaction's
     * grant would say nothing about that other one, which might be prepared. Its signal goes by the
     * sender once the jOOQ transaction commits.
     */
    @Test
    void anEnqueueOnAnotherConnectionThanTheOpenTransactionsDoesNotCarryTheNotify() throws Exception {
        try (Listener listener = new Listener()) {
            int[] other = new int[1];
            producers.dsl().transaction(c -> {
                try (Connection connection = producerPool.getConnection()) {
                    connection.setAutoCommit(false);
                    DSLContext tx = DSL.using(connection, SQLDialect.POSTGRES);
                    other[0] = pid(tx);
                    queue.enqueue(tx, NewJob.of("other-connection", "k"));
                    connection.commit();
                }
            });
            assertThat(listener.next("other-connection").getPID()).isNotEqualTo(other[0]);
        }
    }

    @Test
    void inTransactionSendsTheNotifyFromTheProducersOwnSession() throws Exception {
        JobQueue inside = new JobQueue(
                Locksmith.builder(pool).build(),
                JobQueueConfig.builder().wakeUp(WakeUp.IN_TRANSACTION).build());
        try (Listener listener = new Listener()) {
            int[] producer = new int[1];
            producers.dsl().transaction(c -> {
                producer[0] = pid(c.dsl());
                inside.enqueue(c.dsl(), NewJob.of("in-transaction", "k"));
            });
            assertThat(listener.next("in-transaction").getPID()).isEqualTo(producer[0]);
        }
    }

    @Test
    void aTransactionLocksmithCannotSeeNotifiesFromInsideSoNoWakeUpIsLost() throws Exception {
        try (Listener listener = new Listener();
                Connection plain = producerPool.getConnection()) {
            plain.setAutoCommit(false);
            DSLContext tx = DSL.using(plain, SQLDialect.POSTGRES);
            int producer = pid(tx);
            queue.enqueue(tx, NewJob.of("unseen", "k"));
            plain.commit();
            assertThat(listener.next("unseen").getPID()).isEqualTo(producer);
        }
    }

    @Test
    void aRolledBackEnqueueSignalsNothingAndAnAutoCommittedOneIsSignalledAfterItReturns() throws Exception {
        try (Listener listener = new Listener()) {
            assertThatThrownBy(() -> producers.dsl().transaction(c -> {
                        queue.enqueue(c.dsl(), NewJob.of("rolled-back", "k"));
                        throw new IllegalStateException("roll back");
                    }))
                    .hasMessageContaining("roll back");
            JobQueue silent = new JobQueue(
                    Locksmith.builder(pool).build(),
                    JobQueueConfig.builder().wakeUp(WakeUp.NONE).build());
            silent.enqueue(producers.dsl(), NewJob.of("silent", "k"));
            queue.enqueue(producers.dsl(), NewJob.of("auto-committed", "k"));
            listener.next("auto-committed");
            // Signals go out in order: one for the rollback, or for NONE, would have come first.
            assertThat(listener.queues()).doesNotContain("rolled-back", "silent");
        }
        assertThat(dsl.fetchCount(JOBS, JOBS.QUEUE.eq("rolled-back"))).isZero();
    }

    @Test
    void aDataSourceThatCannotGiveAConnectionDelaysOnlyItsOwnQueuesWakeUps() throws Exception {
        // A data source whose getConnection() hangs for the signal sender, as an exhausted pool or
        // an unreachable server does, until released: its queue's signal can only wait.
        CountDownLatch asked = new CountDownLatch(1);
        CountDownLatch released = new CountDownLatch(1);
        DataSource stalling = (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")
                            && Thread.currentThread().getName().startsWith("locksmith-wake-signals")) {
                        asked.countDown();
                        released.await();
                    }
                    try {
                        return method.invoke(pool, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        JobQueue stalled = new JobQueue(Locksmith.builder(stalling).build());
        try (Listener listener = new Listener()) {
            // The jobs are inserted through the producers' pool; only the signal needs `stalling`.
            // An enqueue that carries its NOTIFY itself needs no sender, and one producer at a time
            // carries: a transaction's second enqueue, while its first holds the grant, is left to
            // the sender.
            String stalledQueue = null;
            for (int i = 0; stalledQueue == null; i++) {
                assertThat(i).as("no signal was left to the sender").isLessThan(10);
                String name = "stalled-" + i;
                producers.dsl().transaction(c -> {
                    stalled.enqueue(c.dsl(), NewJob.of("carrier", "k"));
                    stalled.enqueue(c.dsl(), NewJob.of(name, "k"));
                });
                if (asked.await(1, TimeUnit.SECONDS)) {
                    stalledQueue = name;
                }
            }
            queue.enqueue(producers.dsl(), NewJob.of("free", "k"));
            // with one sender for every data source, this would wait for the release below
            listener.next("free");
            assertThat(listener.queues()).doesNotContain(stalledQueue);
            released.countDown();
            listener.next(stalledQueue);
        } finally {
            released.countDown();
        }
    }

    @Test
    void withoutListenAWorkerPollsSoonAfterAClaimFoundJobsThoughItsPollIntervalIsLong() throws Exception {
        Counting events = new Counting(3);
        // a producer that wakes no one (as a producer in another JVM does not wake this one in-process)
        JobQueue silent = new JobQueue(
                Locksmith.builder(pool).build(),
                JobQueueConfig.builder().wakeUp(WakeUp.NONE).build());
        silent.enqueue(dsl, NewJob.of("adaptive", "k"));
        // One transactional thread: nothing but a poll (no LISTEN, no handler ending) wakes it.
        try (TransactionalWorker worker = TransactionalWorker.builder(
                        new JobQueue(Locksmith.builder(pool).observer(events).build()), "adaptive", (jobs, tx) -> {})
                .threads(1)
                .listen(false)
                .pollInterval(Duration.ofMinutes(10))
                .build()
                .start()) {
            // each next job is enqueued only once the one before it completed
            for (int i = 1; i <= 2; i++) {
                assertThat(events.awaitCompleted(i, WAIT))
                        .as("job " + i + " completed")
                        .isTrue();
                silent.enqueue(dsl, NewJob.of("adaptive", "k"));
            }
            // With a fixed 10-minute poll, the second and third jobs would wait ten minutes each.
            assertThat(events.completed.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("three jobs completed")
                    .isTrue();
        }
        assertThat(events.woke).contains(WorkerEvents.Wake.POLL).doesNotContain(WorkerEvents.Wake.NOTIFICATION);
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    /**
     * An enqueue committed in this JVM wakes this JVM's idle worker of its queue in-process: the
     * worker here has no LISTEN and polls every ten minutes, so nothing else can bring the job
     * within the wait (without the in-process wake-up, this test fails there).
     */
    @Test
    void anEnqueueCommittedInThisJvmWakesItsIdleWorkerInProcess() throws Exception {
        Counting events = new Counting(1);
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool).observer(events).build()), "in-process", (job, tx) -> {})
                .listen(false)
                .minPollInterval(Duration.ofMinutes(10))
                .pollInterval(Duration.ofMinutes(10))
                .build()
                .start()) {
            assertThat(events.idle.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("worker idle")
                    .isTrue();
            producers.dsl().transaction(c -> queue.enqueue(c.dsl(), NewJob.of("in-process", "k")));
            assertThat(events.completed.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("job completed")
                    .isTrue();
        }
        assertThat(events.woke)
                .contains(WorkerEvents.Wake.IN_PROCESS)
                .doesNotContain(WorkerEvents.Wake.POLL, WorkerEvents.Wake.NOTIFICATION);
    }

    @Test
    void behindATransactionPoolerAWorkerListensOnADirectConnection() throws Exception {
        Locksmith pooled = Locksmith.builder(pool)
                .poolingMode(PoolingMode.TRANSACTION)
                .observer(new Counting(0))
                .build();
        assertThatThrownBy(() -> JobWorker.builder(new JobQueue(pooled), "direct", (job, tx) -> {})
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("listenVia");

        Counting events = new Counting(1);
        Locksmith observed = Locksmith.builder(pool)
                .poolingMode(PoolingMode.TRANSACTION)
                .observer(events)
                .build();
        try (JobWorker worker = JobWorker.builder(new JobQueue(observed), "direct", (job, tx) -> {})
                .listenVia(producerPool)
                .pollInterval(Duration.ofMinutes(10))
                .build()
                .start()) {
            assertThat(events.listening.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("LISTEN up")
                    .isTrue();
            assertThat(events.idle.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("worker idle")
                    .isTrue();
            // NOTIFY from the producer's own transaction, and no in-process wake-up (which only the
            // wake-up after commit gives): with a 10-minute poll interval, only the notification
            // can bring the job
            new JobQueue(
                            Locksmith.builder(pool).build(),
                            JobQueueConfig.builder()
                                    .wakeUp(WakeUp.IN_TRANSACTION)
                                    .build())
                    .enqueue(dsl, NewJob.of("direct", "k"));
            assertThat(events.completed.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("job completed")
                    .isTrue();
        }
        assertThat(events.woke).contains(WorkerEvents.Wake.NOTIFICATION);
    }

    /** Counts a worker's completions and wake-ups. */
    private static final class Counting extends WorkerEvents {
        final CountDownLatch completed;
        final CountDownLatch listening = new CountDownLatch(1);
        final CountDownLatch idle = new CountDownLatch(1);
        final List<Wake> woke = new CopyOnWriteArrayList<>();
        private int done;

        Counting(int expected) {
            completed = new CountDownLatch(expected);
        }

        @Override
        public void listening() {
            listening.countDown();
        }

        @Override
        public void idle() {
            idle.countDown();
        }

        @Override
        public void woke(Wake reason) {
            woke.add(reason);
        }

        @Override
        public synchronized void completed(Job job) {
            done++;
            completed.countDown();
            notifyAll();
        }

        synchronized boolean awaitCompleted(int count, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (done < count) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }
    }
}

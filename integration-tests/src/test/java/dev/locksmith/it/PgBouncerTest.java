package dev.locksmith.it;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.LockWait;
import dev.locksmith.Locksmith;
import dev.locksmith.PoolingMode;
import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.advisory.AdvisoryKey;
import dev.locksmith.advisory.AdvisoryLocks;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.WakeUp;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.WorkerEvent;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The library through PgBouncer in transaction pooling mode, with PgJDBC's
 * {@code prepareThreshold=0} (no named server-side prepared statements, which a transaction
 * pooler would hand to the wrong session): transfers, the pool, transaction-scoped advisory
 * locks and bounded waits work with several threads at once; the session-scoped features,
 * declared {@link PoolingMode#TRANSACTION}, refuse. Runs when {@code LOCKSMITH_PGBOUNCER_PORT}
 * names a PgBouncer on 127.0.0.1 in front of the test server on 127.0.0.1:5432 ({@code .ci/run}
 * starts one for its second pass); skipped otherwise.
 */
class PgBouncerTest extends DatabaseTest {

    static final int THREADS = 8;
    static final int ROUNDS = 40;

    private HikariDataSource bouncer;
    private DSLContext viaBouncer;

    private String skipReason;

    @BeforeAll
    void connectThroughPgBouncer() {
        String port = System.getenv("LOCKSMITH_PGBOUNCER_PORT");
        if (port == null || port.isBlank()) {
            skipReason = "LOCKSMITH_PGBOUNCER_PORT is not set: no PgBouncer to test through "
                    + "(.ci/run starts one for its second pass)";
            return;
        }
        if (!database.jdbcUrl().contains("//127.0.0.1:5432/")) {
            skipReason = "the PgBouncer of LOCKSMITH_PGBOUNCER_PORT forwards to 127.0.0.1:5432, but the tests run on "
                    + database.jdbcUrl();
            return;
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://127.0.0.1:" + port.trim() + "/" + database.name() + "?prepareThreshold=0");
        config.setUsername(database.user());
        config.setPassword(database.password());
        config.setMaximumPoolSize(THREADS + 4);
        config.setMinimumIdle(0);
        config.setPoolName("it-pgbouncer");
        bouncer = new HikariDataSource(config);
        viaBouncer = DSL.using(bouncer, SQLDialect.POSTGRES);
        assertThat(viaBouncer.fetchValue("SELECT current_database()")).isEqualTo(database.name());
    }

    @BeforeEach
    void requirePgBouncer() {
        Assumptions.assumeTrue(skipReason == null, skipReason);
    }

    @AfterAll
    void closeBouncer() {
        if (bouncer != null) {
            bouncer.close();
        }
    }

    @Test
    void concurrentTransfersConserveMoney() throws Exception {
        Accounts accounts = new Accounts(viaBouncer);
        List<Long> ids = IntStream.range(0, 6)
                .mapToObj(i -> accounts.open(new BigDecimal("100.00")).id())
                .toList();
        Concurrently.run(THREADS, 120, thread -> {
            SplittableRandom random = new SplittableRandom(thread);
            // the two that never give up under contention (the others may exhaust their retries)
            TransferStrategy[] strategies = {TransferStrategy.ATOMIC_GUARD, TransferStrategy.PESSIMISTIC};
            for (int i = 0; i < ROUNDS; i++) {
                long from = ids.get(random.nextInt(ids.size()));
                long to = ids.get(random.nextInt(ids.size()));
                if (from != to) {
                    accounts.transfer(from, to, new BigDecimal("7.00"), strategies[(thread + i) % strategies.length]);
                }
            }
            return null;
        });
        List<Account> after = ids.stream().map(id -> accounts.get(dsl, id)).toList();
        assertThat(after.stream().map(Account::balance).reduce(BigDecimal.ZERO, BigDecimal::add))
                .isEqualByComparingTo("600.00");
        assertThat(after).allSatisfy(a -> assertThat(a.balance()).isNotNegative());
    }

    @Test
    void theChannelAccountPoolNeverHandsOneAccountToTwoCallers() throws Exception {
        ChannelAccountPool channel = new ChannelAccountPool(viaBouncer);
        channel.register(
                viaBouncer, IntStream.range(0, 12).mapToObj(i -> "B" + i).toList());
        Map<String, String> holders = new ConcurrentHashMap<>();
        AtomicInteger doubleHolds = new AtomicInteger();
        AtomicInteger cycles = new AtomicInteger();
        Concurrently.run(THREADS, 120, thread -> {
            for (int i = 0; i < ROUNDS; i++) {
                String owner = thread + "-" + i;
                ChannelAccount account = channel.acquire(Duration.ofMinutes(1), owner, Duration.ofSeconds(30))
                        .orElseThrow();
                if (holders.putIfAbsent(account.publicKey(), owner) != null) {
                    doubleHolds.incrementAndGet();
                }
                holders.remove(account.publicKey(), owner);
                viaBouncer.transaction(c -> channel.release(c.dsl(), account.publicKey(), owner));
                cycles.incrementAndGet();
            }
            return null;
        });
        assertThat(doubleHolds).hasValue(0);
        assertThat(cycles).hasValue(THREADS * ROUNDS);
        assertThat(channel.stats().leased()).isZero();
    }

    @Test
    void aTransactionScopedAdvisoryLockExcludesAcrossPooledSessions() throws Exception {
        AdvisoryLocks locks = new AdvisoryLocks(
                Locksmith.builder(bouncer).poolingMode(PoolingMode.TRANSACTION).build());
        AdvisoryKey key = AdvisoryKey.of("pgbouncer", "counter");
        long id = new Accounts(viaBouncer).open(BigDecimal.ZERO).id();
        Concurrently.run(THREADS, 120, thread -> {
            for (int i = 0; i < ROUNDS; i++) {
                viaBouncer.transaction(c -> {
                    locks.lock(c.dsl(), key, LockWait.upTo(Duration.ofSeconds(30)));
                    // read, then write in a second statement: only the lock keeps increments from being lost
                    BigDecimal read = c.dsl()
                            .select(ACCOUNTS.BALANCE)
                            .from(ACCOUNTS)
                            .where(ACCOUNTS.ID.eq(id))
                            .fetchSingle()
                            .value1();
                    c.dsl()
                            .update(ACCOUNTS)
                            .set(ACCOUNTS.BALANCE, read.add(BigDecimal.ONE))
                            .where(ACCOUNTS.ID.eq(id))
                            .execute();
                });
            }
            return null;
        });
        assertThat(new Accounts(dsl).get(dsl, id).balance()).isEqualByComparingTo(BigDecimal.valueOf(THREADS * ROUNDS));
    }

    @Test
    void aBoundedWaitHoldsAndItsLockTimeoutStaysInItsTransaction() throws Exception {
        Accounts accounts = new Accounts(viaBouncer);
        long id = accounts.open(BigDecimal.ONE).id();
        String serverDefault = dsl.fetchValue("SHOW lock_timeout").toString();
        try (HeldTransaction holder =
                HeldTransaction.start(dsl, tx -> accounts.lockForUpdate(tx, id, LockWait.forever()))) {
            for (int i = 0; i < THREADS; i++) {
                assertThatThrownBy(() -> viaBouncer.transaction(
                                c -> accounts.lockForUpdate(c.dsl(), id, LockWait.upTo(Duration.ofMillis(100)))))
                        .isInstanceOf(LockNotAvailableException.class);
            }
            holder.rollback();
        }
        for (int i = 0; i < 3 * THREADS; i++) {
            assertThat(viaBouncer.fetchValue("SHOW lock_timeout").toString()).isEqualTo(serverDefault);
        }
    }

    @Test
    void sessionScopedFeaturesDeclaredTransactionModeRefuse() {
        AdvisoryLocks locks = new AdvisoryLocks(
                Locksmith.builder(bouncer).poolingMode(PoolingMode.TRANSACTION).build());
        assertThatThrownBy(() -> locks.lockSession(AdvisoryKey.of("pgbouncer", "s"), LockWait.forever()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PoolingMode.TRANSACTION");
        assertThatThrownBy(() -> JobWorker.builder(
                                new JobQueue(Locksmith.builder(bouncer)
                                        .poolingMode(PoolingMode.TRANSACTION)
                                        .build()),
                                "q",
                                (job, tx) -> {})
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("LISTEN");
    }

    /**
     * Behind the pooler, an enqueue in a transaction still wakes a worker after its commit (the
     * signal is a transaction of its own, which a transaction pooler carries), to a worker that
     * listens on a direct connection; polls ten minutes apart could not bring the job in time.
     * And a worker that cannot listen at all picks jobs up by its adaptive poll.
     */
    @Test
    void workersAreWokenThroughThePoolerByADirectListenOrTheAdaptivePoll() throws Exception {
        Locksmith pooled =
                Locksmith.builder(bouncer).poolingMode(PoolingMode.TRANSACTION).build();
        JobQueue queue = new JobQueue(pooled);
        CountDownLatch listening = new CountDownLatch(1);
        Locksmith observed = Locksmith.builder(bouncer)
                .poolingMode(PoolingMode.TRANSACTION)
                .observer(new LocksmithObserver() {
                    @Override
                    public void workerEvent(WorkerEvent event, String q) {
                        if (event == WorkerEvent.LISTENING) {
                            listening.countDown();
                        }
                    }
                })
                .build();
        Set<Long> ran = ConcurrentHashMap.newKeySet();
        try (JobWorker direct = JobWorker.builder(
                                new JobQueue(observed), "bounced-listen", (job, tx) -> ran.add(job.id()))
                        .listenVia(pool)
                        .pollInterval(Duration.ofMinutes(10))
                        .minPollInterval(Duration.ofMinutes(10))
                        .build()
                        .start();
                JobWorker polling = JobWorker.builder(queue, "bounced-poll", (job, tx) -> ran.add(job.id()))
                        .listen(false)
                        .pollInterval(Duration.ofSeconds(30))
                        .build()
                        .start()) {
            assertThat(listening.await(60, TimeUnit.SECONDS)).as("LISTEN up").isTrue();
            // producers that wake no worker in-process (as producers in another JVM): the NOTIFY
            // from the producer's transaction through the pooler, and no wake-up at all
            JobQueue notifying = new JobQueue(
                    pooled,
                    JobQueueConfig.builder().wakeUp(WakeUp.IN_TRANSACTION).build());
            JobQueue silent = new JobQueue(
                    pooled, JobQueueConfig.builder().wakeUp(WakeUp.NONE).build());
            long woken =
                    pooled.dsl().transactionResult(c -> notifying.enqueue(c.dsl(), NewJob.of("bounced-listen", "k")));
            long polled = silent.enqueue(viaBouncer, NewJob.of("bounced-poll", "k"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!ran.containsAll(List.of(woken, polled)) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(ran).contains(woken, polled);
        }
    }
}

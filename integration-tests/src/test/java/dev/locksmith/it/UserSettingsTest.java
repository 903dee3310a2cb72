package dev.locksmith.it;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static dev.locksmith.codegen.Tables.ACCOUNT_TRANSFERS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;
import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.LOCK_WAIT_EVENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.ExecutionMode;
import dev.locksmith.Isolation;
import dev.locksmith.LockWait;
import dev.locksmith.Locksmith;
import dev.locksmith.RetryPolicy;
import dev.locksmith.Transactions;
import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferRequest;
import dev.locksmith.accounts.TransferResult;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.advisory.AdvisoryKey;
import dev.locksmith.advisory.AdvisoryLocks;
import dev.locksmith.advisory.SessionLock;
import dev.locksmith.audit.BlockingReport;
import dev.locksmith.audit.LockAudit;
import dev.locksmith.audit.LockAuditConfig;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.pool.AcquireStrategy;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.pool.ChannelAccountPoolConfig;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.jooq.Configuration;
import org.jooq.DSLContext;
import org.jooq.ExecuteListener;
import org.jooq.SQLDialect;
import org.jooq.conf.ParamType;
import org.jooq.conf.RenderKeywordCase;
import org.jooq.conf.RenderNameCase;
import org.jooq.conf.RenderQuotedNames;
import org.jooq.conf.Settings;
import org.jooq.conf.StatementType;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Legitimate jOOQ settings of the user's configuration do not break any repository: a small
 * workload through every one of them (queue, pool, accounts with every transfer strategy,
 * advisory locks, lock audit) under each setting, in both execution modes, the default one with
 * and without a listener (through jOOQ, and sent straight).
 */
class UserSettingsTest extends DatabaseTest {

    static Stream<Arguments> settings() {
        return Stream.of(
                Arguments.of("named parameter prefix $", new Settings().withRenderNamedParamPrefix("$")),
                Arguments.of(
                        "named parameters with prefix $",
                        new Settings().withParamType(ParamType.NAMED).withRenderNamedParamPrefix("$")),
                Arguments.of("static statements", new Settings().withStatementType(StatementType.STATIC_STATEMENT)),
                Arguments.of("inlined bind values", new Settings().withParamType(ParamType.INLINED)),
                Arguments.of("names never quoted", new Settings().withRenderQuotedNames(RenderQuotedNames.NEVER)),
                Arguments.of("names always quoted", new Settings().withRenderQuotedNames(RenderQuotedNames.ALWAYS)),
                Arguments.of(
                        "upper-case unquoted names",
                        new Settings()
                                .withRenderNameCase(RenderNameCase.UPPER)
                                .withRenderQuotedNames(RenderQuotedNames.NEVER)),
                Arguments.of("lower-case names", new Settings().withRenderNameCase(RenderNameCase.LOWER)),
                Arguments.of(
                        "upper-case keywords, formatted",
                        new Settings()
                                .withRenderKeywordCase(RenderKeywordCase.UPPER)
                                .withRenderFormatted(true)));
    }

    /**
     * How the repositories' hot statements run: in the default mode with no listener (sent
     * straight, nothing would observe jOOQ's execution), in the default mode with a listener
     * (through jOOQ), and in raw JDBC mode.
     */
    enum Route {
        DEFAULT_QUIET,
        DEFAULT_LISTENED,
        RAW_JDBC
    }

    static Stream<Arguments> settingsAndModes() {
        return settings()
                .flatMap(a -> Stream.of(Route.values()).map(route -> Arguments.of(a.get()[0], a.get()[1], route)));
    }

    @BeforeEach
    void clean() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
        dsl.deleteFrom(ACCOUNT_TRANSFERS).execute();
        dsl.deleteFrom(LOCK_WAIT_EVENT).execute();
    }

    private static <T> T inTx(DSLContext user, Function<Configuration, T> body) {
        return user.transactionResult(body::apply);
    }

    private DSLContext userDsl(Settings settings, Route route) {
        DefaultConfiguration configuration = new DefaultConfiguration();
        configuration.set(pool).set(SQLDialect.POSTGRES).set(settings);
        if (route == Route.DEFAULT_LISTENED) {
            configuration.set(new ExecuteListener() {});
        }
        return Locksmith.builder(DSL.using(configuration))
                .executionMode(route == Route.RAW_JDBC ? ExecutionMode.RAW_JDBC : ExecutionMode.JOOQ)
                .build()
                .dsl();
    }

    @ParameterizedTest(name = "{0}, {2}")
    @MethodSource("settingsAndModes")
    void theQueueWorks(String name, Settings settings, Route route) {
        DSLContext user = userDsl(settings, route);
        JobQueue queue = new JobQueue(user);
        long first = queue.enqueue(
                user,
                NewJob.builder("s-q", "k")
                        .payload("{\"a\": [1, \"it's\"]}")
                        .uniqueKey("u-1")
                        .priority(1)
                        .build());
        List<Long> ids = inTx(
                user,
                c -> queue.enqueueAll(
                        c.dsl(),
                        List.of(
                                NewJob.of("s-q", "k"),
                                NewJob.builder("s-q", "k").uniqueKey("u-1").build(),
                                NewJob.builder("s-q", "k").shard(3).build(),
                                NewJob.builder("s-q", "k")
                                        .delay(Duration.ofHours(1))
                                        .build())));
        assertThat(ids.get(1)).isEqualTo(first); // a live duplicate of the unique key

        List<Job> leased = queue.claim("s-q", 2, Duration.ofSeconds(30), "w-1");
        assertThat(leased).extracting(Job::id).containsExactlyInAnyOrder(ids.get(0), first);
        assertThat(leased)
                .filteredOn(job -> job.id() == first)
                .singleElement()
                .satisfies(job -> assertThat(job.payload()).isEqualTo("{\"a\": [1, \"it's\"]}"));
        Job plain = leased.stream().filter(job -> job.id() != first).findFirst().orElseThrow();
        Job unique =
                leased.stream().filter(job -> job.id() == first).findFirst().orElseThrow();
        assertThat(queue.heartbeat(plain, Duration.ofSeconds(60))).isTrue();
        boolean completed = inTx(user, c -> queue.complete(c.dsl(), plain));
        assertThat(completed).isTrue();
        FailResult failed = inTx(user, c -> queue.fail(c.dsl(), unique, "boom"));
        assertThat(failed.outcome()).isEqualTo(FailResult.Outcome.RETRY_SCHEDULED);
        assertThat(queue.claim(Claim.of("s-q", 5).onShards(Set.of(3)), Duration.ofSeconds(30), "w-2"))
                .extracting(Job::id)
                .containsExactly(ids.get(2));
        assertThat(queue.release(queue.find(user, ids.get(2)).orElseThrow())).isTrue();
        List<Job> inTransaction = inTx(user, c -> queue.claimInTransaction(c.dsl(), Claim.of("s-q", 5)));
        assertThat(inTransaction).extracting(Job::id).containsExactly(ids.get(2));
        List<Job> again = queue.claim("s-q", 5, Duration.ofSeconds(30), "w-3");
        int completedAll = inTx(user, c -> queue.completeAll(c.dsl(), again));
        assertThat(completedAll).isEqualTo(again.size());
        boolean cancelled = inTx(user, c -> queue.cancel(c.dsl(), ids.get(3)));
        assertThat(cancelled).isTrue();
        assertThat(queue.rescueExpired()).isZero();
        assertThat(queue.deleteFinishedOlderThan(Duration.ZERO, 10)).isGreaterThanOrEqualTo(0);
        assertThat(queue.stats()).isNotEmpty();
    }

    @ParameterizedTest(name = "{0}, {2}")
    @MethodSource("settingsAndModes")
    void thePoolWorks(String name, Settings settings, Route route) {
        DSLContext user = userDsl(settings, route);
        for (AcquireStrategy strategy : AcquireStrategy.values()) {
            ChannelAccountPool pool = new ChannelAccountPool(
                    user, ChannelAccountPoolConfig.builder().strategy(strategy).build());
            int registered = inTx(user, c -> pool.register(c.dsl(), List.of("GA", "GB")));
            assertThat(registered).isBetween(0, 2);
            ChannelAccount a = pool.acquire(Duration.ofSeconds(30), "o-1").orElseThrow();
            ChannelAccount b = pool.acquire(Duration.ofSeconds(30), "o-2", Duration.ofSeconds(1))
                    .orElseThrow();
            assertThat(a.publicKey()).isNotEqualTo(b.publicKey());
            assertThat(pool.acquire(Duration.ofSeconds(30), "o-3")).isEmpty();
            java.time.OffsetDateTime extended =
                    inTx(user, c -> pool.extend(c.dsl(), a.publicKey(), "o-1", Duration.ofMinutes(5)));
            assertThat(extended).isAfter(a.lockedUntil());
            user.transaction(c -> pool.release(c.dsl(), a.publicKey(), "o-1"));
            user.transaction(c -> pool.release(c.dsl(), b.publicKey(), "o-2"));
            assertThat(pool.find(user, a.publicKey()).orElseThrow().lockedBy()).isNull();
            assertThat(pool.stats().idle()).isEqualTo(2);
            assertThat(pool.expireLeases()).isZero();
            int removed = inTx(user, c -> pool.remove(c.dsl(), List.of("GA", "GB")));
            assertThat(removed).isEqualTo(2);
        }
    }

    @ParameterizedTest(name = "{0}, {2}")
    @MethodSource("settingsAndModes")
    void accountsWorkWithEveryStrategy(String name, Settings settings, Route route) {
        DSLContext user = userDsl(settings, route);
        Accounts accounts = new Accounts(user);
        Account a = accounts.open(new BigDecimal("100.00"));
        List<Account> more =
                inTx(user, c -> accounts.openAll(c.dsl(), List.of(new BigDecimal("50.00"), new BigDecimal("0.00"))));
        Account b = more.get(0);
        for (TransferStrategy strategy : TransferStrategy.values()) {
            assertThat(accounts.transfer(a.id(), b.id(), new BigDecimal("1.00"), strategy)
                            .transferred())
                    .isTrue();
            assertThat(accounts.transfer(b.id(), a.id(), new BigDecimal("0.50"), strategy)
                            .transferred())
                    .isTrue();
            Isolation isolation =
                    strategy == TransferStrategy.SERIALIZABLE ? Isolation.SERIALIZABLE : Isolation.READ_COMMITTED;
            TransferResult inCallers = new Transactions(user, RetryPolicy.defaults())
                    .run(isolation, c -> accounts.transfer(c.dsl(), a.id(), b.id(), new BigDecimal("0.25"), strategy));
            assertThat(inCallers.transferred()).isTrue();
            assertThat(accounts.transfer(a.id(), more.get(1).id(), new BigDecimal("1000.00"), strategy)
                            .status())
                    .isEqualTo(TransferResult.Status.INSUFFICIENT_FUNDS);
            TransferRequest once = TransferRequest.of(a.id(), b.id(), new BigDecimal("0.10"), strategy)
                    .withTransferId(name + "/" + route + "/" + strategy);
            assertThat(accounts.transfer(once).status()).isEqualTo(TransferResult.Status.TRANSFERRED);
            assertThat(accounts.transfer(once).status()).isEqualTo(TransferResult.Status.ALREADY_TRANSFERRED);
        }
        user.transaction(c -> {
            DSLContext tx = c.dsl();
            assertThat(accounts.lockForUpdate(tx, a.id(), LockWait.upTo(Duration.ofSeconds(1))))
                    .isPresent();
            assertThat(accounts.lockForUpdate(tx, List.of(b.id(), a.id()), LockWait.noWait()))
                    .hasSize(2);
            assertThat(accounts.debit(tx, a.id(), new BigDecimal("1.00"))).isTrue();
            assertThat(accounts.credit(tx, b.id(), new BigDecimal("1.00"))).isTrue();
            Account now = accounts.get(tx, a.id());
            assertThat(accounts.updateIfVersion(
                            tx, a.id(), now.version(), now.balance().add(BigDecimal.ONE)))
                    .isTrue();
            assertThat(accounts.updateOptimistically(tx, b.id(), balance -> balance.subtract(BigDecimal.ONE)))
                    .isNotNull();
        });
        assertThat(accounts.updateOptimistically(a.id(), balance -> balance.subtract(BigDecimal.ONE)))
                .isNotNull();
        BigDecimal total = dsl.select(DSL.sum(ACCOUNTS.BALANCE))
                .from(ACCOUNTS)
                .where(ACCOUNTS.ID.in(a.id(), b.id(), more.get(1).id()))
                .fetchSingle()
                .value1();
        assertThat(total).isEqualByComparingTo("149.00");
        Optional<Account> found =
                new Transactions(user, RetryPolicy.defaults()).run(c -> accounts.find(c.dsl(), a.id()));
        assertThat(found).isPresent();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("settings")
    void advisoryLocksWork(String name, Settings settings) throws Exception {
        DSLContext user = userDsl(settings, Route.DEFAULT_LISTENED);
        AdvisoryLocks locks = new AdvisoryLocks(pool);
        AdvisoryKey key = AdvisoryKey.of("settings", name);
        user.transaction(c -> {
            locks.lock(c.dsl(), key, LockWait.upTo(Duration.ofSeconds(1)));
            assertThat(locks.tryLock(c.dsl(), AdvisoryKey.of("settings", name + "/2")))
                    .isTrue();
            locks.lockShared(c.dsl(), AdvisoryKey.of("settings", name + "/3"), LockWait.forever());
            assertThat(locks.tryLockShared(c.dsl(), AdvisoryKey.of("settings", name + "/3")))
                    .isTrue();
        });
        try (SessionLock lock = locks.lockSession(key, LockWait.upTo(Duration.ofSeconds(1)))) {
            assertThat(locks.tryLockSession(key)).isEmpty();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("settings")
    void theLockAuditWorks(String name, Settings settings) throws Exception {
        DSLContext user = userDsl(settings, Route.DEFAULT_LISTENED);
        long row = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, BigDecimal.TEN)
                .returning()
                .fetchSingle()
                .getId();
        try (LockAudit audit = new LockAudit(
                        user,
                        LockAuditConfig.builder()
                                .probeDelay(Duration.ofMillis(20))
                                .probeInterval(Duration.ofMillis(20))
                                .build());
                HeldTransaction holder = HeldTransaction.start(user, tx -> {
                    audit.tag(tx);
                    tx.selectFrom(ACCOUNTS)
                            .where(ACCOUNTS.ID.eq(row))
                            .forUpdate()
                            .fetch();
                })) {
            assertThat(new BlockingReport(user).blockedSessions()).isEmpty();
            assertThatThrownBy(() -> user.transaction(c -> {
                        audit.tag(c.dsl());
                        audit.guard(
                                c.dsl(),
                                "accounts:" + row,
                                LockWait.noWait(),
                                () -> LockWait.noWait()
                                        .applyTo(c.dsl()
                                                .selectFrom(ACCOUNTS)
                                                .where(ACCOUNTS.ID.eq(row))
                                                .forUpdate())
                                        .fetch());
                    }))
                    .isInstanceOf(LockNotAvailableException.class);
            assertThat(audit.flush(Duration.ofSeconds(30))).isTrue();
            holder.commit();
            assertThat(audit.droppedRows()).isZero();
            assertThat(audit.deleteOlderThan(Duration.ofDays(1), 10)).isZero();
        }
        assertThat(dsl.selectFrom(LOCK_WAIT_EVENT).fetch())
                .singleElement()
                .satisfies(event -> assertThat(event.getResourceId()).isEqualTo("accounts:" + row));
        assertThat(Optional.ofNullable(
                        dsl.selectFrom(LOCK_WAIT_EVENT).fetchOne().getHolderTxnId()))
                .isPresent();
    }
}

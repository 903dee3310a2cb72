package dev.locksmith.it.citus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.RetryPolicy;
import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferRequest;
import dev.locksmith.accounts.TransferResult;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.it.support.Concurrently;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Accounts on a Citus cluster: the table is distributed by id, transfers between accounts on
 * different workers conserve money under 16 threads with every strategy Citus supports, every
 * statement they send is a single-shard (router) statement, SERIALIZABLE is refused, and a
 * bounded lock wait holds on the workers.
 */
class CitusAccountsTest extends CitusTest {

    private static final int ACCOUNTS = 16;
    private static final BigDecimal OPENING = new BigDecimal("1000.00");

    private Accounts accounts;
    private List<Long> ids;

    @BeforeEach
    void openAccounts() {
        dsl.execute("DELETE FROM {0}", DSL.table(DSL.name(schema, "account_transfers")));
        dsl.execute("DELETE FROM {0}", DSL.table(DSL.name(schema, "accounts")));
        accounts = new Accounts(dsl);
        ids = dsl.transactionResult(c -> accounts.openAll(c.dsl(), Collections.nCopies(ACCOUNTS, OPENING))).stream()
                .map(Account::id)
                .toList();
    }

    /** The port of the worker node that holds {@code id}'s account. */
    private int workerOf(long id) {
        return DSL.using(pool, SQLDialect.POSTGRES)
                .fetchSingle(
                        "SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid) "
                                + "WHERE p.shardid = get_shard_id_for_distribution_column({0}::regclass, {1})",
                        DSL.val(schema + ".accounts"), DSL.val(id))
                .get(0, Integer.class);
    }

    private BigDecimal total() {
        return dsl.select(DSL.sum(DSL.field("balance", BigDecimal.class)))
                .from(DSL.table(DSL.name(schema, "accounts")))
                .fetchSingle()
                .value1();
    }

    @Test
    void accountsAreDistributedByIdAcrossBothWorkers() {
        List<String> distributed = DSL.using(pool, SQLDialect.POSTGRES)
                .fetch(
                        "SELECT table_name::text || ' ' || distribution_column FROM citus_tables "
                                + "WHERE table_name::text IN ({0}, {1}) ORDER BY 1",
                        DSL.val(schema + ".accounts"), DSL.val(schema + ".account_transfers"))
                .getValues(0, String.class);
        assertThat(distributed).containsExactly(schema + ".account_transfers transfer_id", schema + ".accounts id");
        Set<Integer> workers = ids.stream().map(this::workerOf).collect(Collectors.toSet());
        assertThat(workers).as("the accounts' workers").hasSize(2);
    }

    /**
     * 16 threads, 100 random transfers each between 16 accounts on both workers, in both
     * directions: nothing is created or lost, no balance goes negative, and transfers between
     * the two workers happened.
     */
    @ParameterizedTest
    @EnumSource(
            value = TransferStrategy.class,
            names = {"ATOMIC_GUARD", "PESSIMISTIC", "OPTIMISTIC"})
    void transfersBetweenAccountsOnDifferentWorkersConserveMoney(TransferStrategy strategy) throws Exception {
        BigDecimal before = total();
        // 16 threads on 16 accounts collide often, and on a cluster each attempt takes longer:
        // optimistic transfers get more attempts than the default 5
        Accounts accounts = new Accounts(
                dsl,
                RetryPolicy.builder()
                        .maxAttempts(100)
                        .maxBackoff(Duration.ofMillis(50))
                        .build());
        List<int[]> counts = Concurrently.run(16, 240, thread -> {
            int transferred = 0;
            int acrossWorkers = 0;
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (int i = 0; i < 100; i++) {
                long from = ids.get(random.nextInt(ACCOUNTS));
                long to = ids.get(random.nextInt(ACCOUNTS));
                if (from == to) {
                    continue;
                }
                BigDecimal amount = BigDecimal.valueOf(random.nextInt(1, 30_000), 2);
                TransferResult result = accounts.transfer(from, to, amount, strategy);
                if (result.status() == TransferResult.Status.TRANSFERRED) {
                    transferred++;
                    if (workerOf(from) != workerOf(to)) {
                        acrossWorkers++;
                    }
                }
            }
            return new int[] {transferred, acrossWorkers};
        });
        int transferred = counts.stream().mapToInt(c -> c[0]).sum();
        int acrossWorkers = counts.stream().mapToInt(c -> c[1]).sum();
        System.out.printf(
                "citus %s: %d transfers, %d between workers, total %s%n",
                strategy, transferred, acrossWorkers, total());
        assertThat(total()).isEqualByComparingTo(before);
        assertThat(dsl.fetchCount(
                        DSL.table(DSL.name(schema, "accounts")),
                        DSL.field("balance").lt(BigDecimal.ZERO)))
                .isZero();
        assertThat(transferred).isGreaterThan(500);
        assertThat(acrossWorkers).isGreaterThan(100);
    }

    /** The control: a read-then-write without locks, the same threads, loses money on the cluster. */
    @Test
    void aNaiveReadModifyWriteOnTheClusterLosesUpdates() throws Exception {
        long id = ids.get(0);
        DSLContext plain = DSL.using(pool, SQLDialect.POSTGRES);
        org.jooq.Table<?> table = DSL.table(DSL.name(schema, "accounts"));
        Concurrently.run(16, 120, thread -> {
            for (int i = 0; i < 25; i++) {
                plain.transaction(c -> {
                    BigDecimal balance = c.dsl()
                            .select(DSL.field("balance", BigDecimal.class))
                            .from(table)
                            .where(DSL.field("id").eq(id))
                            .fetchSingle()
                            .value1();
                    c.dsl()
                            .update(table)
                            .set(DSL.field("balance", BigDecimal.class), balance.add(BigDecimal.ONE))
                            .where(DSL.field("id").eq(id))
                            .execute();
                });
            }
            return null;
        });
        BigDecimal after = accounts.get(dsl, id).balance();
        System.out.printf(
                "citus naive read-modify-write: 400 increments, %s lost%n",
                OPENING.add(new BigDecimal(400)).subtract(after));
        assertThat(after).isLessThan(OPENING.add(new BigDecimal(400)));
    }

    /** Citus returns a distributed insert's rows grouped by shard; openAll still answers in the order given. */
    @Test
    void openAllReturnsTheAccountsInTheOrderGiven() {
        List<BigDecimal> balances = new ArrayList<>();
        for (int i = 1; i <= 40; i++) {
            balances.add(BigDecimal.valueOf(i, 2));
        }
        List<Account> opened = dsl.transactionResult(c -> accounts.openAll(c.dsl(), balances));
        assertThat(opened).extracting(Account::balance).containsExactlyElementsOf(balances);
        assertThat(opened).extracting(Account::id).isSorted();
        assertThat(opened.stream().map(a -> workerOf(a.id())).collect(Collectors.toSet()))
                .hasSize(2);
    }

    @Test
    void serializableIsRefusedAndNothingIsWritten() {
        long from = ids.get(0);
        long to = ids.get(1);
        assertThatThrownBy(() ->
                        accounts.transfer(TransferRequest.of(from, to, BigDecimal.TEN, TransferStrategy.SERIALIZABLE)
                                .withTransferId("serializable-on-citus")))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("SERIALIZABLE")
                .hasMessageContaining("Citus");
        assertThatThrownBy(() -> dsl.transaction(
                        c -> accounts.transfer(c.dsl(), from, to, BigDecimal.TEN, TransferStrategy.SERIALIZABLE)))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(accounts.get(dsl, from).balance()).isEqualByComparingTo(OPENING);
        assertThat(accounts.get(dsl, to).balance()).isEqualByComparingTo(OPENING);
        assertThat(dsl.fetchCount(DSL.table(DSL.name(schema, "account_transfers"))))
                .isZero();
    }

    /**
     * A SERIALIZABLE transaction of the library's Transactions on the cluster runs, and warns once
     * per Transactions object that it is serializable only per node.
     */
    @Test
    void aSerializableTransactionOnTheClusterWarnsOnce() throws Exception {
        dev.locksmith.Transactions transactions =
                new dev.locksmith.Transactions(dsl, dev.locksmith.RetryPolicy.defaults());
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            for (int i = 0; i < 2; i++) {
                BigDecimal balance = transactions.run(
                        dev.locksmith.Isolation.SERIALIZABLE,
                        c -> accounts.get(c.dsl(), ids.get(0)).balance());
                assertThat(balance).isEqualByComparingTo(OPENING);
            }
        } finally {
            System.setErr(err);
        }
        List<String> warnings = captured.toString(java.nio.charset.StandardCharsets.UTF_8)
                .lines()
                .filter(line -> line.contains("WARN dev.locksmith.Transactions"))
                .toList();
        assertThat(warnings)
                .singleElement()
                .asString()
                .contains("SERIALIZABLE transactions on a Citus coordinator are serializable only per node");
    }

    @Test
    void aTransferIdIsRecordedOnceAcrossTheCluster() {
        TransferRequest request = TransferRequest.of(
                        ids.get(0), ids.get(1), BigDecimal.TEN, TransferStrategy.PESSIMISTIC)
                .withTransferId("once-on-citus");
        assertThat(accounts.transfer(request).status()).isEqualTo(TransferResult.Status.TRANSFERRED);
        assertThat(accounts.transfer(request).status()).isEqualTo(TransferResult.Status.ALREADY_TRANSFERRED);
        assertThat(accounts.get(dsl, ids.get(0)).balance()).isEqualByComparingTo(OPENING.subtract(BigDecimal.TEN));
    }

    @Test
    void lockingSeveralAccountsLocksEachInAscendingOrder() {
        List<Long> reversed = new ArrayList<>(ids.subList(0, 6));
        Collections.reverse(reversed);
        List<Account> locked = dsl.transactionResult(
                c -> accounts.lockForUpdate(c.dsl(), reversed, LockWait.upTo(Duration.ofSeconds(5))));
        assertThat(locked)
                .extracting(Account::id)
                .containsExactlyElementsOf(reversed.stream().sorted().toList());
    }

    /**
     * A bounded wait on a row another transaction holds fails after its bound. On Citus the lock
     * is taken on a worker, where the coordinator's {@code set_config} does not reach: without
     * the propagated {@code SET LOCAL} the waiter would wait until the holder ends.
     */
    @Test
    void aBoundedWaitHoldsOnTheWorkers() throws Exception {
        long id = ids.get(3);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService holder = Executors.newSingleThreadExecutor();
        try {
            Future<?> holding = holder.submit(() -> dsl.transaction(c -> {
                accounts.lockForUpdate(c.dsl(), id, LockWait.forever());
                held.countDown();
                release.await(30, TimeUnit.SECONDS);
            }));
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            long started = System.nanoTime();
            assertThatThrownBy(() -> dsl.transaction(
                            c -> accounts.lockForUpdate(c.dsl(), id, LockWait.upTo(Duration.ofMillis(300)))))
                    .isInstanceOf(LockNotAvailableException.class);
            assertThat(release.getCount())
                    .as("the holder still held the row when the wait gave up")
                    .isEqualTo(1);
            System.out.printf(
                    "citus bounded wait of 300 ms gave up after %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
            release.countDown();
            holding.get(10, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            holder.shutdownNow();
        }
    }

    /** Every statement of each strategy's transfer, of the guarded updates and of the locks names one shard. */
    @Test
    void everyAccountStatementIsARouterQuery() throws Exception {
        List<String> statements = Collections.synchronizedList(new ArrayList<>());
        DSLContext recordedDsl = recording(statements);
        Accounts recorded = new Accounts(recordedDsl);
        long a = ids.get(0);
        long b = ids.get(1);
        for (TransferStrategy strategy :
                List.of(TransferStrategy.ATOMIC_GUARD, TransferStrategy.PESSIMISTIC, TransferStrategy.OPTIMISTIC)) {
            recorded.transfer(a, b, BigDecimal.ONE, strategy);
            recorded.transfer(b, a, BigDecimal.ONE, strategy);
        }
        recordedDsl.transaction(c -> {
            recorded.debit(c.dsl(), a, BigDecimal.ONE);
            recorded.credit(c.dsl(), b, BigDecimal.ONE);
            Account current = recorded.get(c.dsl(), a);
            recorded.updateIfVersion(c.dsl(), a, current.version(), current.balance());
            recorded.lockForUpdate(c.dsl(), List.of(b, a), LockWait.noWait());
        });
        List<String> onAccounts = statements.stream()
                .distinct()
                .filter(sql -> sql.contains("\"accounts\""))
                .filter(sql -> !sql.contains("pg_dist"))
                .toList();
        assertThat(onAccounts).hasSizeGreaterThanOrEqualTo(6);
        Map<String, String> plans = new ConcurrentHashMap<>();
        for (String sql : onAccounts) {
            plans.put(sql, explain(sql));
        }
        assertThat(plans)
                .allSatisfy((sql, plan) ->
                        assertThat(plan).as(sql).contains("Task Count: 1").doesNotContain("Distributed Subplan"));
    }
}

package dev.locksmith.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.RetryPolicy;
import dev.locksmith.Transactions;
import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferRequest;
import dev.locksmith.accounts.TransferResult;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.exception.CommitOutcomeUnknownException;
import dev.locksmith.exception.ConnectionTerminatedException;
import dev.locksmith.exception.DatabaseException;
import dev.locksmith.it.support.CuttingProxy;
import dev.locksmith.it.support.DatabaseTest;
import java.io.IOException;
import java.math.BigDecimal;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultExecuteListenerProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What {@link Transactions#run} reports when the connection dies around {@code COMMIT}. A proxy
 * between the driver and the server cuts the connection exactly before the server sees the
 * {@code COMMIT} (it aborts) or exactly after it answered (it committed, the client never heard).
 */
class CommitOutcomeTest extends DatabaseTest {

    private CuttingProxy proxy;
    private HikariDataSource proxied;
    private DSLContext viaProxy;

    @BeforeAll
    void startProxy() throws IOException {
        proxy = new CuttingProxy(database.jdbcUrl());
        proxied = proxy.pool(database, 4, 2000);
        viaProxy = DSL.using(proxied, SQLDialect.POSTGRES);
        dsl.execute("CREATE TABLE ledger (n integer PRIMARY KEY)");
    }

    @AfterAll
    void stopProxy() throws IOException {
        proxied.close();
        proxy.close();
    }

    @BeforeEach
    void clean() {
        proxy.up();
        dsl.execute("TRUNCATE ledger");
    }

    private boolean recorded(int n) {
        return dsl.fetchExists(DSL.selectOne().from("ledger").where("n = ?", n));
    }

    @Test
    void aCommitThatAppliedIsReportedAsCommittedAlthoughItsConnectionDied() {
        Transactions tx = new Transactions(viaProxy, RetryPolicy.noRetry());

        String result = tx.run(c -> {
            c.dsl().execute("INSERT INTO ledger VALUES (1)");
            proxy.cutAtNextCommit(CuttingProxy.Cut.AFTER_COMMIT);
            return "done";
        });

        assertThat(proxy.cuts()).as("the connection was cut at COMMIT").isPositive();
        assertThat(result).isEqualTo("done");
        assertThat(recorded(1)).isTrue();
    }

    @Test
    void aCommitTheServerNeverSawIsReportedAsNotCommittedAndRetriedOnlyWhenAsked() {
        int cutsBefore = proxy.cuts();
        Transactions once = new Transactions(viaProxy, RetryPolicy.noRetry());

        assertThatThrownBy(() -> once.run(c -> {
                    c.dsl().execute("INSERT INTO ledger VALUES (2)");
                    proxy.cutAtNextCommit(CuttingProxy.Cut.BEFORE_COMMIT);
                    return null;
                }))
                .isExactlyInstanceOf(ConnectionTerminatedException.class);

        assertThat(proxy.cuts()).isEqualTo(cutsBefore + 1);
        assertThat(recorded(2)).isFalse();
    }

    @Test
    void anOutcomeThatCannotBeEstablishedIsReportedAsUnknownWithTheTransactionId() {
        Transactions tx = new Transactions(
                viaProxy,
                RetryPolicy.builder().commitResolution(Duration.ofMillis(500)).build());
        AtomicInteger attempts = new AtomicInteger();

        CommitOutcomeUnknownException unknown = catchThrowableOfType(
                () -> tx.run(c -> {
                    attempts.incrementAndGet();
                    c.dsl().execute("INSERT INTO ledger VALUES (3)");
                    proxy.cutAtNextCommit(CuttingProxy.Cut.AFTER_COMMIT);
                    proxy.refuseNew(); // and no new connection gets through to ask
                    return null;
                }),
                CommitOutcomeUnknownException.class);

        assertThat(unknown).isNotNull();
        assertThat(attempts).as("never retried").hasValue(1);
        assertThat(unknown.transactionId()).isPresent();
        // the id it reports answers the question once the server can be asked
        String status = dsl.fetchValue(
                        "SELECT pg_xact_status(?::xid8)",
                        String.valueOf(unknown.transactionId().getAsLong()))
                .toString();
        assertThat(status).isEqualTo("committed");
        assertThat(recorded(3)).isTrue();
    }

    @Test
    void withResolutionOffAFailedCommitIsAlwaysUnknown() {
        Transactions tx = new Transactions(
                viaProxy,
                RetryPolicy.noRetry().toBuilder()
                        .commitResolution(Duration.ZERO)
                        .build());

        assertThatThrownBy(() -> tx.run(c -> {
                    c.dsl().execute("INSERT INTO ledger VALUES (4)");
                    proxy.cutAtNextCommit(CuttingProxy.Cut.AFTER_COMMIT);
                    return null;
                }))
                .isInstanceOf(CommitOutcomeUnknownException.class);
        assertThatThrownBy(() -> RetryPolicy.builder().commitResolution(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("commitResolution");
    }

    @Test
    void theBodysCheckedExceptionComesBackAsItselfAndRollsBack() {
        Transactions tx = new Transactions(dsl, RetryPolicy.defaults());
        IOException thrown = new IOException("disk full");
        AtomicInteger attempts = new AtomicInteger();

        IOException caught = catchThrowableOfType(
                () -> tx.run(c -> {
                    attempts.incrementAndGet();
                    c.dsl().execute("INSERT INTO ledger VALUES (5)");
                    throw thrown;
                }),
                IOException.class);

        assertThat(caught).isSameAs(thrown);
        assertThat(attempts).hasValue(1);
        assertThat(recorded(5)).isFalse();
    }

    @Test
    void aCheckedSqlExceptionFromTheBodyIsADatabaseError() {
        Transactions tx = new Transactions(dsl, RetryPolicy.noRetry());

        assertThatThrownBy(() -> tx.run(c -> {
                    throw new SQLException("raw JDBC failed", "22012");
                }))
                .isInstanceOf(DatabaseException.class)
                .extracting("sqlState")
                .isEqualTo("22012");
    }

    @Test
    void aTransferWhoseCommitDiedIsReportedTransferredAndNeverAppliedTwice() {
        Accounts accounts = new Accounts(viaProxy);
        Account from = accounts.open(dsl, new BigDecimal("100.00"));
        Account to = accounts.open(dsl, new BigDecimal("0.00"));
        TransferRequest request = TransferRequest.of(
                        from.id(), to.id(), new BigDecimal("30.00"), TransferStrategy.ATOMIC_GUARD)
                .withTransferId("order-1");

        // the commit applies, the connection dies before the answer: resolved as committed
        proxy.cutAtNextCommit(CuttingProxy.Cut.AFTER_COMMIT);
        TransferResult first = accounts.transfer(request);
        assertThat(proxy.cuts()).isPositive();
        assertThat(first.status()).isEqualTo(TransferResult.Status.TRANSFERRED);

        // a caller who retries anyway (say, after a crash of its own) does not move the money again
        TransferResult again = accounts.transfer(request);
        assertThat(again.status()).isEqualTo(TransferResult.Status.ALREADY_TRANSFERRED);
        assertThat(again.transferred()).isTrue();
        assertThat(accounts.get(dsl, from.id()).balance()).isEqualByComparingTo("70.00");
        assertThat(accounts.get(dsl, to.id()).balance()).isEqualByComparingTo("30.00");
    }

    @Test
    void afterAnUnknownOutcomeRetryingTheSameTransferIdAppliesItExactlyOnce() {
        Accounts accounts = new Accounts(
                viaProxy, RetryPolicy.builder().commitResolution(Duration.ZERO).build());
        Account from = accounts.open(dsl, new BigDecimal("100.00"));
        Account to = accounts.open(dsl, new BigDecimal("0.00"));
        for (TransferStrategy strategy : TransferStrategy.values()) {
            TransferRequest request = TransferRequest.of(from.id(), to.id(), new BigDecimal("10.00"), strategy)
                    .withTransferId("unknown-" + strategy);
            proxy.cutAtNextCommit(CuttingProxy.Cut.AFTER_COMMIT);
            assertThatThrownBy(() -> accounts.transfer(request)).isInstanceOf(CommitOutcomeUnknownException.class);

            assertThat(accounts.transfer(request).status())
                    .as(strategy.name())
                    .isEqualTo(TransferResult.Status.ALREADY_TRANSFERRED);
        }
        assertThat(accounts.get(dsl, from.id()).balance()).isEqualByComparingTo("60.00");
        assertThat(accounts.get(dsl, to.id()).balance()).isEqualByComparingTo("40.00");
    }

    @Test
    void transfersReturnTheirTransactionIdWithTheirFirstStatementInsteadOfAnExtraRoundTrip() {
        List<String> statements = new CopyOnWriteArrayList<>();
        DSLContext recorded =
                DSL.using(dsl.configuration().derive(new DefaultExecuteListenerProvider(new ExecuteListener() {
                    @Override
                    public void executeStart(ExecuteContext ctx) {
                        statements.add(ctx.sql());
                    }
                })));
        Accounts accounts = new Accounts(recorded);
        Account a = accounts.open(dsl, new BigDecimal("100.00"));
        Account b = accounts.open(dsl, new BigDecimal("0.00"));
        for (TransferStrategy strategy : TransferStrategy.values()) {
            assertThat(accounts.transfer(a.id(), b.id(), BigDecimal.ONE, strategy)
                            .transferred())
                    .isTrue();
        }
        assertThat(statements)
                .as("no separate look-up of the transaction id")
                .noneMatch(sql -> sql.contains("pg_current_xact_id_if_assigned"));

        // a body of the caller's own statements gets the look-up
        new Transactions(recorded, RetryPolicy.noRetry()).run(c -> c.dsl().execute("INSERT INTO ledger VALUES (6)"));
        assertThat(statements).anyMatch(sql -> sql.contains("pg_current_xact_id_if_assigned"));
    }

    @Test
    void aTransactionIdReportedByAnotherConnectionIsNotTakenForThisTransactions() {
        Accounts direct = new Accounts(dsl);
        Account account = direct.open(dsl, new BigDecimal("10.00"));
        Transactions once = new Transactions(viaProxy, RetryPolicy.noRetry());

        // the auto-committed debit on another connection reports its (committed) transaction id;
        // this transaction's COMMIT never reaches the server: it must not be reported committed
        assertThatThrownBy(() -> once.run(c -> {
                    direct.debit(dsl, account.id(), BigDecimal.ONE);
                    c.dsl().execute("INSERT INTO ledger VALUES (7)");
                    proxy.cutAtNextCommit(CuttingProxy.Cut.BEFORE_COMMIT);
                    return null;
                }))
                .isExactlyInstanceOf(ConnectionTerminatedException.class);
        assertThat(recorded(7)).isFalse();
    }

    @Test
    void aTransferIdReusedForAnotherTransferIsRefusedAndChangesNothing() {
        Accounts accounts = new Accounts(dsl);
        Account a = accounts.open(dsl, new BigDecimal("100.00"));
        Account b = accounts.open(dsl, new BigDecimal("100.00"));
        TransferRequest first = TransferRequest.of(a.id(), b.id(), new BigDecimal("5.00"), TransferStrategy.PESSIMISTIC)
                .withTransferId("reused");
        assertThat(accounts.transfer(first).status()).isEqualTo(TransferResult.Status.TRANSFERRED);

        assertThatThrownBy(() -> accounts.transfer(
                        TransferRequest.of(a.id(), b.id(), new BigDecimal("6.00"), TransferStrategy.PESSIMISTIC)
                                .withTransferId("reused")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reused");
        assertThat(accounts.get(dsl, a.id()).balance()).isEqualByComparingTo("95.00");

        // insufficient funds records nothing: the same id can succeed later
        TransferRequest tooMuch = TransferRequest.of(
                        a.id(), b.id(), new BigDecimal("500.00"), TransferStrategy.ATOMIC_GUARD)
                .withTransferId("later");
        assertThat(accounts.transfer(tooMuch).status()).isEqualTo(TransferResult.Status.INSUFFICIENT_FUNDS);
        accounts.credit(dsl, a.id(), new BigDecimal("500.00"));
        assertThat(accounts.transfer(tooMuch).status()).isEqualTo(TransferResult.Status.TRANSFERRED);
        assertThatThrownBy(() -> TransferRequest.of(a.id(), b.id(), BigDecimal.ONE, TransferStrategy.ATOMIC_GUARD)
                        .withTransferId(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("transferId");
    }
}

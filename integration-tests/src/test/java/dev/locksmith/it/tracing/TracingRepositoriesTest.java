package dev.locksmith.it.tracing;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;
import static dev.locksmith.it.support.SpanRecorder.DB_SYSTEM;
import static dev.locksmith.it.support.SpanRecorder.ERROR_TYPE;
import static dev.locksmith.it.support.SpanRecorder.OUTCOME;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.Locksmith;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferResult;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import dev.locksmith.it.support.SpanRecorder;
import dev.locksmith.pool.ChannelAccountPool;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import org.jooq.DSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Transfers, row locks and pool acquires as spans, under the caller's span, with their attributes. */
class TracingRepositoriesTest extends DatabaseTest {

    private static final AttributeKey<String> STRATEGY = AttributeKey.stringKey("locksmith.transfer.strategy");
    private static final AttributeKey<Boolean> OWN_TRANSACTION =
            AttributeKey.booleanKey("locksmith.transfer.own_transaction");
    private static final AttributeKey<String> LOCK_TABLE = AttributeKey.stringKey("locksmith.lock.table");
    private static final AttributeKey<String> LOCK_WAIT = AttributeKey.stringKey("locksmith.lock.wait");
    private static final AttributeKey<Boolean> POOL_WAITS = AttributeKey.booleanKey("locksmith.pool.waits");

    private SpanRecorder spans;
    private DSLContext traced;

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
        spans = new SpanRecorder();
        traced = Locksmith.builder(dsl).observer(spans.tracing()).build().dsl();
    }

    @AfterEach
    void tearDown() {
        spans.close();
    }

    @Test
    void aTransferIsASpanUnderTheCallersWithItsStrategyAndOutcome() throws Exception {
        Accounts accounts = new Accounts(traced);
        long from = accounts.open(new BigDecimal("100.00")).id();
        long to = accounts.open(BigDecimal.ZERO).id();

        Span request = spans.tracer().spanBuilder("POST /transfers").startSpan();
        try (Scope ignored = request.makeCurrent()) {
            accounts.transfer(from, to, new BigDecimal("30.00"), TransferStrategy.PESSIMISTIC);
        } finally {
            request.end();
        }
        SpanData transfer = spans.await("locksmith.transfer", STRATEGY, "pessimistic");
        assertThat(transfer.getTraceId()).isEqualTo(request.getSpanContext().getTraceId());
        assertThat(transfer.getParentSpanId())
                .isEqualTo(request.getSpanContext().getSpanId());
        assertThat(transfer.getKind()).isEqualTo(SpanKind.INTERNAL);
        assertThat(transfer.getAttributes().get(OWN_TRANSACTION)).isTrue();
        assertThat(transfer.getAttributes().get(OUTCOME)).isEqualTo("ok");
        assertThat(transfer.getAttributes().get(DB_SYSTEM)).isEqualTo("postgresql");
        assertThat(transfer.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);

        // Too little money, in the caller's transaction: an expected outcome, not an error.
        TransferResult refused = traced.transactionResult(
                c -> accounts.transfer(c.dsl(), from, to, new BigDecimal("1000.00"), TransferStrategy.ATOMIC_GUARD));
        assertThat(refused.status()).isEqualTo(TransferResult.Status.INSUFFICIENT_FUNDS);
        SpanData guarded = spans.await("locksmith.transfer", STRATEGY, "atomic_guard");
        assertThat(guarded.getParentSpanContext().isValid()).isFalse();
        assertThat(guarded.getAttributes().get(OWN_TRANSACTION)).isFalse();
        assertThat(guarded.getAttributes().get(OUTCOME)).isEqualTo("insufficient_funds");
        assertThat(guarded.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    }

    @Test
    void rowLocksAreSpansAndANowaitOnAHeldRowEndsItsSpanInError() throws Exception {
        Accounts accounts = new Accounts(traced);
        long id = accounts.open(new BigDecimal("10.00")).id();

        traced.transaction(c -> accounts.lockForUpdate(c.dsl(), id, LockWait.noWait()));
        SpanData locked = spans.await("locksmith.lock.rows", OUTCOME, "ok");
        assertThat(locked.getAttributes().get(LOCK_TABLE)).isEqualTo("accounts");
        assertThat(locked.getAttributes().get(LOCK_WAIT)).isEqualTo("no_wait");
        assertThat(locked.getAttributes().get(DB_SYSTEM)).isEqualTo("postgresql");

        Accounts untraced = new Accounts(dsl);
        try (HeldTransaction holder =
                HeldTransaction.start(dsl, tx -> untraced.lockForUpdate(tx, id, LockWait.forever()))) {
            assertThatThrownBy(() -> traced.transaction(c -> accounts.lockForUpdate(c.dsl(), id, LockWait.noWait())))
                    .isInstanceOf(LockNotAvailableException.class);
            holder.commit();
        }
        SpanData refused = spans.await("locksmith.lock.rows", OUTCOME, "error");
        assertThat(refused.getAttributes().get(LOCK_WAIT)).isEqualTo("no_wait");
        assertThat(refused.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(refused.getAttributes().get(ERROR_TYPE)).isEqualTo(LockNotAvailableException.class.getName());
        assertThat(refused.getEvents()).extracting(e -> e.getName()).containsExactly("exception");
    }

    @Test
    void poolAcquiresAreSpansWithTheirWaitAndOutcome() throws Exception {
        ChannelAccountPool pool = new ChannelAccountPool(traced);
        pool.register(dsl, List.of("GTRACED"));
        Duration lease = Duration.ofMinutes(1);

        assertThat(pool.acquire(lease, "first")).isPresent();
        assertThat(pool.acquire(lease, "second")).isEmpty();
        assertThat(pool.acquire(lease, "third", Duration.ofMillis(50))).isEmpty();

        SpanData acquired = spans.await("locksmith.pool.acquire", OUTCOME, "ok");
        assertThat(acquired.getAttributes().get(POOL_WAITS)).isFalse();
        assertThat(acquired.getAttributes().get(DB_SYSTEM)).isEqualTo("postgresql");
        SpanData empty = spans.await("locksmith.pool.acquire", OUTCOME, "empty");
        assertThat(empty.getAttributes().get(POOL_WAITS)).isFalse();
        SpanData timedOut = spans.await("locksmith.pool.acquire", OUTCOME, "timed_out");
        assertThat(timedOut.getAttributes().get(POOL_WAITS)).isTrue();
        assertThat(List.of(acquired, empty, timedOut))
                .allSatisfy(s -> assertThat(s.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET))
                .allSatisfy(s -> assertThat(s.getKind()).isEqualTo(SpanKind.INTERNAL));
    }
}

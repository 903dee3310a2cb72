package dev.locksmith.accounts;

import dev.locksmith.Isolation;
import dev.locksmith.RetryPolicy;
import dev.locksmith.Transactions;
import dev.locksmith.internal.Distribution;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.Observing;
import dev.locksmith.internal.Savepoints;
import dev.locksmith.internal.Sleeper;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * Runs transfers for {@link Accounts}: in a transaction of their own, retried as the policy says,
 * or in the caller's under a savepoint; and the compare-and-swap rounds of {@code OPTIMISTIC}.
 */
final class TransferRunner {

    private final DSLContext dsl;
    private final RetryPolicy policy;
    private final Transactions transactions;
    private final Distribution distribution;
    private final Distribution.PerLayout<AccountStatements> statements;
    private final Observing observing;

    TransferRunner(
            DSLContext dsl,
            RetryPolicy policy,
            Transactions transactions,
            Distribution distribution,
            Observing observing) {
        this.dsl = dsl;
        this.policy = policy;
        this.transactions = transactions;
        this.distribution = distribution;
        this.statements =
                distribution.perLayout(new AccountStatements(dsl, false), () -> new AccountStatements(dsl, true));
        this.observing = observing;
    }

    TransferResult ownTransaction(TransferRequest request) {
        refuseSerializableOnCitus(dsl, request.strategy());
        if (request.strategy() == TransferStrategy.OPTIMISTIC) {
            return optimisticLoop(
                    request.from(),
                    request.to(),
                    () -> transactions.run(c -> Transfers.attempt(statements(c.dsl()), c.dsl(), request)));
        }
        Isolation isolation =
                request.strategy() == TransferStrategy.SERIALIZABLE ? Isolation.SERIALIZABLE : Isolation.READ_COMMITTED;
        int[] attempts = {0};
        TransferResult.Status status = transactions.run(isolation, c -> {
            attempts[0]++;
            return Transfers.attempt(statements(c.dsl()), c.dsl(), request);
        });
        return new TransferResult(status, attempts[0]);
    }

    TransferResult callersTransaction(DSLContext ctx, TransferRequest request) {
        if (request.strategy() == TransferStrategy.OPTIMISTIC) {
            return optimisticLoop(
                    request.from(),
                    request.to(),
                    () -> Savepoints.unit(ctx, () -> Transfers.attempt(statements(ctx), ctx, request)));
        }
        refuseSerializableOnCitus(ctx, request.strategy());
        if (request.strategy() == TransferStrategy.SERIALIZABLE) {
            String level = Errors.translating(
                    () -> ctx.select(DSL.function("current_setting", String.class, DSL.val("transaction_isolation")))
                            .fetchSingle()
                            .value1());
            if (!"serializable".equals(level)) {
                throw new IllegalStateException(
                        "SERIALIZABLE transfer in the caller's transaction needs a SERIALIZABLE "
                                + "transaction, but it is " + level);
            }
        }
        return new TransferResult(Savepoints.unit(ctx, () -> Transfers.attempt(statements(ctx), ctx, request)), 1);
    }

    /** The statements for where the accounts table is: one server's, or Citus's router-only set. */
    AccountStatements statements(DSLContext ctx) {
        return statements.on(ctx);
    }

    /**
     * Citus runs a transaction that touches several workers with each worker's own isolation and
     * its own commit, so SERIALIZABLE there does not detect a conflict between two transfers
     * whose rows live on different workers: money could be created or lost. Refused before
     * anything is sent.
     */
    private void refuseSerializableOnCitus(DSLContext ctx, TransferStrategy strategy) {
        if (strategy == TransferStrategy.SERIALIZABLE && distribution.distributed(ctx)) {
            throw new UnsupportedOperationException("TransferStrategy.SERIALIZABLE is not supported where Citus "
                    + "distributes the accounts table: Citus does not make a transaction that spans workers "
                    + "serializable. Use ATOMIC_GUARD, PESSIMISTIC or OPTIMISTIC (docs/citus.md)");
        }
    }

    @SuppressWarnings("UnusedVariable") // from, to: the conflict names the account that moved
    private TransferResult optimisticLoop(
            long from, long to, java.util.function.Supplier<TransferResult.Status> attempt) {
        for (int n = 1; ; n++) {
            try {
                return new TransferResult(Errors.translating(attempt), n);
            } catch (Transfers.VersionConflict conflict) {
                pauseBeforeRetry(n, conflict.accountId());
            }
        }
    }

    void pauseBeforeRetry(int failedAttempts, long accountId) {
        if (failedAttempts >= policy.maxAttempts()) {
            throw new OptimisticConflictException(accountId, failedAttempts);
        }
        Duration pause =
                policy.backoff(failedAttempts, ThreadLocalRandom.current().nextDouble());
        OptimisticConflictException conflict = new OptimisticConflictException(accountId, failedAttempts);
        policy.listener().onRetry(failedAttempts, conflict, pause);
        observing.retried(failedAttempts, conflict);
        try {
            Sleeper.THREAD_SLEEP.sleep(pause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OptimisticConflictException(accountId, failedAttempts);
        }
    }
}

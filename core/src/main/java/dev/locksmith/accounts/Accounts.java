package dev.locksmith.accounts;

import static dev.locksmith.codegen.Tables.ACCOUNTS;

import dev.locksmith.Isolation;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.internal.Savepoints;
import dev.locksmith.LockWait;
import dev.locksmith.PgErrors;
import dev.locksmith.RetryPolicy;
import dev.locksmith.Transactions;
import dev.locksmith.codegen.tables.records.AccountsRecord;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.UnaryOperator;
import org.jooq.DSLContext;
import org.jooq.InsertValuesStep1;
import org.jooq.impl.DSL;

/**
 * Balances in the {@code accounts} table, with every locking pattern that keeps concurrent
 * money movements correct.
 *
 * <p>Methods that take a {@code tx} run in the caller's transaction (pass
 * {@code configuration.dsl()} from inside {@code dsl.transaction(...)}) and commit or roll
 * back with it. {@link #transfer(long, long, BigDecimal, TransferStrategy)} and
 * {@link #updateOptimistically(long, UnaryOperator)} run their own transactions on the
 * {@code DSLContext} given at construction, retrying under the {@link RetryPolicy}.
 *
 * <p>Amounts are {@code BigDecimal} at scale 2 ({@link Amounts}); more decimal places are
 * rejected, never rounded. Bad input fails with {@link IllegalArgumentException} or
 * {@link NullPointerException} before anything is written; an unknown id fails with
 * {@link AccountNotFoundException}. Database failures arrive as
 * {@link dev.locksmith.LocksmithException} subclasses.
 *
 * <p>Thread-safe and stateless apart from its configuration; share one instance.
 *
 * <p>The hot statements are rendered once, at construction, with the settings of the
 * {@code DSLContext} given here, and run through JDBC on the connection of the
 * {@code DSLContext} passed to each call (README, "How it works"); {@code ExecuteListener}s do
 * not see them.
 */
public final class Accounts {

    private final DSLContext dsl;
    private final RetryPolicy policy;
    private final Transactions.Sleeper sleeper;
    private final Transactions.RetryListener listener;
    private final Transactions transactions;
    private final AccountStatements statements;
    private final SchemaMapping schema;

    /** Accounts on {@code dsl} with {@link RetryPolicy#defaults()}. */
    public Accounts(DSLContext dsl) {
        this(dsl, RetryPolicy.defaults());
    }

    /** Accounts on {@code dsl}, retrying under {@code policy}. */
    public Accounts(DSLContext dsl, RetryPolicy policy) {
        this(dsl, policy, Transactions.Sleeper.THREAD_SLEEP, (attempts, failure, pause) -> { });
    }

    /**
     * Full control: {@code sleeper} pauses between attempts (tests pass one that does not
     * sleep), {@code listener} observes every retry (metrics).
     */
    public Accounts(DSLContext dsl, RetryPolicy policy, Transactions.Sleeper sleeper,
            Transactions.RetryListener listener) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.transactions = new Transactions(dsl, policy, sleeper, listener);
        this.statements = new AccountStatements(dsl);
        this.schema = SchemaMapping.of(dsl);
    }

    private Accounts(Accounts base, Transactions transactions) {
        this.dsl = base.dsl;
        this.policy = base.policy;
        this.sleeper = base.sleeper;
        this.listener = base.listener;
        this.transactions = transactions;
        this.statements = base.statements;
        this.schema = base.schema;
    }

    /**
     * A copy whose own-transaction transfers look for the outcome of a {@code COMMIT} whose
     * connection failed for up to {@code timeout}; {@link Duration#ZERO} turns the look-up off
     * (a failed {@code COMMIT} is then always unknown). Transfers return their transaction id
     * with their first statement, so the look-up costs no round trip unless a {@code COMMIT}
     * fails. See {@link Transactions#withCommitResolution}.
     */
    public Accounts withCommitResolution(Duration timeout) {
        return new Accounts(this, transactions.withCommitResolution(timeout));
    }

    // ---------------------------------------------------------------- open and read

    /** Opens an account with {@code openingBalance} (zero or more) in its own transaction. */
    public Account open(BigDecimal openingBalance) {
        return open(dsl, openingBalance);
    }

    /** Opens an account with {@code openingBalance} (zero or more) in the caller's transaction. */
    public Account open(DSLContext tx, BigDecimal openingBalance) {
        DSLContext ctx = schema.on(tx);
        BigDecimal balance = Amounts.nonNegative("openingBalance", openingBalance);
        return PgErrors.translating(() -> toAccount(
                ctx.insertInto(ACCOUNTS).set(ACCOUNTS.BALANCE, balance).returning().fetchSingle()));
    }

    /**
     * Opens one account per balance with a single multi-row insert, in the caller's
     * transaction; returns them in the order given.
     */
    public List<Account> openAll(DSLContext tx, List<BigDecimal> openingBalances) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(openingBalances, "openingBalances");
        if (openingBalances.isEmpty()) {
            return List.of();
        }
        List<BigDecimal> balances = openingBalances.stream()
                .map(b -> Amounts.nonNegative("openingBalance", b)).toList();
        return PgErrors.translating(() -> {
            InsertValuesStep1<AccountsRecord, BigDecimal> insert = ctx.insertInto(ACCOUNTS, ACCOUNTS.BALANCE);
            for (BigDecimal balance : balances) {
                insert = insert.values(balance);
            }
            return insert.returning().fetch().stream().map(Accounts::toAccount).toList();
        });
    }

    /** The account, if it exists. Takes no lock. */
    public Optional<Account> find(DSLContext tx, long id) {
        DSLContext ctx = schema.on(tx);
        return PgErrors.translating(() ->
                ctx.selectFrom(ACCOUNTS).where(ACCOUNTS.ID.eq(id)).fetchOptional().map(Accounts::toAccount));
    }

    /** The account; takes no lock. @throws AccountNotFoundException if there is none */
    public Account get(DSLContext tx, long id) {
        DSLContext ctx = schema.on(tx);
        return find(ctx, id).orElseThrow(() -> new AccountNotFoundException(id));
    }

    // ---------------------------------------------------------------- pessimistic

    /**
     * {@code SELECT ... FOR UPDATE} of one account, waiting as {@code wait} says. The row stays
     * locked until the caller's transaction ends.
     *
     * @return the locked account; empty only with {@link LockWait#skipLocked()} when another
     *     transaction holds the row
     * @throws AccountNotFoundException if there is no such account
     * @throws dev.locksmith.LockNotAvailableException for {@code noWait()} on a held row, or
     *     when an {@code upTo(...)} bound expires; the caller's transaction is then aborted
     * @throws IllegalStateException when {@code tx} is in auto-commit mode, whatever the wait:
     *     the lock would end with the statement (and a bound would not hold)
     */
    public Optional<Account> lockForUpdate(DSLContext tx, long id, LockWait wait) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(wait, "wait");
        Transactions.requireOpen(ctx, "lockForUpdate");
        Optional<Account> locked = wait.run(ctx, () -> wait.applyTo(
                ctx.selectFrom(ACCOUNTS).where(ACCOUNTS.ID.eq(id)).forUpdate()).fetchOptional().map(Accounts::toAccount));
        if (locked.isEmpty() && !exists(ctx, id)) {
            throw new AccountNotFoundException(id);
        }
        return locked;
    }

    /**
     * Locks several accounts with one {@code SELECT ... ORDER BY id FOR UPDATE}: rows are
     * locked in ascending id order whatever order {@code ids} has, so two callers locking
     * overlapping sets cannot deadlock.
     *
     * @return the locked accounts in ascending id order; with {@link LockWait#skipLocked()},
     *     only those no other transaction holds
     * @throws AccountNotFoundException naming the first missing id
     * @throws IllegalStateException when {@code tx} is in auto-commit mode, as for one account
     */
    public List<Account> lockForUpdate(DSLContext tx, Collection<Long> ids, LockWait wait) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(ids, "ids");
        Objects.requireNonNull(wait, "wait");
        Transactions.requireOpen(ctx, "lockForUpdate");
        TreeSet<Long> sorted = new TreeSet<>();
        for (Long id : ids) {
            sorted.add(Objects.requireNonNull(id, "ids must not contain null"));
        }
        if (sorted.isEmpty()) {
            return List.of();
        }
        List<Account> locked = wait.run(ctx, () -> wait.applyTo(ctx.selectFrom(ACCOUNTS)
                .where(ACCOUNTS.ID.in(sorted)).orderBy(ACCOUNTS.ID).forUpdate())
                .fetch().stream().map(Accounts::toAccount).toList());
        if (locked.size() < sorted.size()) {
            List<Long> present = PgErrors.translating(() ->
                    ctx.select(ACCOUNTS.ID).from(ACCOUNTS).where(ACCOUNTS.ID.in(sorted)).fetch(ACCOUNTS.ID));
            sorted.removeAll(present);
            if (!sorted.isEmpty()) {
                throw new AccountNotFoundException(sorted.first());
            }
        }
        return locked;
    }

    // ---------------------------------------------------------------- guarded atomic updates

    /**
     * Takes {@code amount} off the balance in one guarded statement
     * ({@code UPDATE ... SET balance = balance - :amount WHERE id = :id AND balance >= :amount}),
     * so concurrent debits can never overdraw. Locks the row until the caller's transaction ends.
     *
     * @return true if applied; false, with nothing written, when the balance is too low
     * @throws AccountNotFoundException if there is no such account
     */
    public boolean debit(DSLContext tx, long id, BigDecimal amount) {
        DSLContext ctx = schema.on(tx);
        BigDecimal value = Amounts.positive("amount", amount);
        Objects.requireNonNull(ctx, "ctx");
        boolean applied = Transfers.debit(statements, ctx, id, value);
        if (!applied && !exists(ctx, id)) {
            throw new AccountNotFoundException(id);
        }
        return applied;
    }

    /**
     * Adds {@code amount} to the balance in one statement. Locks the row until the caller's
     * transaction ends.
     *
     * @return true (a credit always applies to an existing account)
     * @throws AccountNotFoundException if there is no such account
     */
    public boolean credit(DSLContext tx, long id, BigDecimal amount) {
        DSLContext ctx = schema.on(tx);
        BigDecimal value = Amounts.positive("amount", amount);
        Objects.requireNonNull(ctx, "ctx");
        if (!Transfers.credit(statements, ctx, id, value)) {
            throw new AccountNotFoundException(id);
        }
        return true;
    }

    // ---------------------------------------------------------------- optimistic

    /**
     * Compare-and-swap: sets the balance to {@code newBalance} and bumps {@code version} only if
     * the version is still {@code expectedVersion}. Takes no lock before the write; the write
     * itself locks the row until the caller's transaction ends.
     *
     * @return true if applied; false, with nothing written, when the version had moved on
     * @throws AccountNotFoundException if there is no such account
     */
    public boolean updateIfVersion(DSLContext tx, long id, long expectedVersion, BigDecimal newBalance) {
        DSLContext ctx = schema.on(tx);
        BigDecimal balance = Amounts.nonNegative("newBalance", newBalance);
        Objects.requireNonNull(ctx, "ctx");
        boolean applied = Transfers.compareAndSwap(statements, ctx, id, expectedVersion, balance);
        if (!applied && !exists(ctx, id)) {
            throw new AccountNotFoundException(id);
        }
        return applied;
    }

    /**
     * Optimistic read-modify-write in the caller's transaction: reads the balance, applies
     * {@code change}, and compare-and-swaps the result; when another writer got there first, it
     * reads again and retries, up to the policy's attempts. Needs READ COMMITTED (each read sees
     * the latest commit); under REPEATABLE READ or SERIALIZABLE a conflict surfaces as
     * {@link dev.locksmith.SerializationFailureException} instead.
     *
     * @param change computes the new balance from the current one; may run several times, so it
     *     must be a pure function; its result must be zero or more at scale 2
     * @return the account as written
     * @throws OptimisticConflictException when every attempt lost the race
     */
    public Account updateOptimistically(DSLContext tx, long id, UnaryOperator<BigDecimal> change) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(change, "change");
        for (int attempt = 1; ; attempt++) {
            Account current = get(ctx, id);
            BigDecimal next = Amounts.nonNegative("new balance", change.apply(current.balance()));
            if (Transfers.compareAndSwap(statements, ctx, id, current.version(), next)) {
                return new Account(id, next, current.version() + 1, null);
            }
            pauseBeforeRetry(attempt, id);
        }
    }

    /** {@link #updateOptimistically(DSLContext, long, UnaryOperator)} with each attempt auto-committed. */
    public Account updateOptimistically(long id, UnaryOperator<BigDecimal> change) {
        return updateOptimistically(dsl, id, change);
    }

    // ---------------------------------------------------------------- transfers

    /**
     * {@link #transfer(TransferRequest)} without a transfer id: moves {@code amount} in its own
     * transaction. Not idempotent: after a {@link dev.locksmith.CommitOutcomeUnknownException}
     * the caller cannot tell whether to try again; give a transfer id when that matters.
     */
    public TransferResult transfer(long from, long to, BigDecimal amount, TransferStrategy strategy) {
        return transfer(TransferRequest.of(from, to, amount, strategy));
    }

    /**
     * Moves the amount in its own transaction, retrying deadlocks and serialization failures
     * (and, for {@code OPTIMISTIC}, lost compare-and-swap races) under the retry policy.
     *
     * <p>Commit outcome (see {@link Transactions}): a normal return means the transfer
     * committed; when the connection fails during {@code COMMIT}, the outcome is looked up, so a
     * committed transfer is reported as committed; when it cannot be, the call fails with
     * {@link dev.locksmith.CommitOutcomeUnknownException}. Any other exception means nothing
     * changed. With a {@linkplain TransferRequest#transferId() transfer id}, calling again
     * after any failure is safe: a transfer that did commit is reported
     * {@link TransferResult.Status#ALREADY_TRANSFERRED} and not applied twice.
     *
     * @throws AccountNotFoundException if either account does not exist
     * @throws OptimisticConflictException for {@code OPTIMISTIC} when every attempt lost
     * @throws IllegalArgumentException when the transfer id was used before for another transfer
     */
    public TransferResult transfer(TransferRequest request) {
        Objects.requireNonNull(request, "request");
        if (request.strategy() == TransferStrategy.OPTIMISTIC) {
            return optimisticLoop(request.from(), request.to(), () -> transactions.run(c ->
                    Transfers.attempt(statements, c.dsl(), request)));
        }
        Isolation isolation = request.strategy() == TransferStrategy.SERIALIZABLE
                ? Isolation.SERIALIZABLE : Isolation.READ_COMMITTED;
        int[] attempts = {0};
        TransferResult.Status status = transactions.run(isolation, c -> {
            attempts[0]++;
            return Transfers.attempt(statements, c.dsl(), request);
        });
        return new TransferResult(status, attempts[0]);
    }

    /** {@link #transfer(DSLContext, TransferRequest)} without a transfer id. */
    public TransferResult transfer(DSLContext tx, long from, long to, BigDecimal amount, TransferStrategy strategy) {
        DSLContext ctx = schema.on(tx);
        return transfer(ctx, TransferRequest.of(from, to, amount, strategy));
    }

    /**
     * Moves the amount inside the caller's open transaction, so the transfer commits or rolls
     * back with the caller's own writes (and the caller learns the outcome from its own
     * commit). It runs under a savepoint: on insufficient funds or any failure nothing of it
     * remains, and the caller's transaction is still usable (except after a database error such
     * as a deadlock, which aborts the whole transaction in PostgreSQL). No transaction-level
     * retry is possible here; {@code OPTIMISTIC} still retries its compare-and-swap rounds.
     * {@code SERIALIZABLE} needs the caller's transaction to be SERIALIZABLE and fails with
     * {@link IllegalStateException} otherwise. A transfer id is recorded in the caller's
     * transaction, so it commits (and protects against a second application) with it.
     */
    public TransferResult transfer(DSLContext tx, TransferRequest request) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(request, "request");
        Transactions.requireOpen(ctx, "transfer(ctx, ...)");
        if (request.strategy() == TransferStrategy.OPTIMISTIC) {
            return optimisticLoop(request.from(), request.to(),
                    () -> Savepoints.unit(ctx, () -> Transfers.attempt(statements, ctx, request)));
        }
        if (request.strategy() == TransferStrategy.SERIALIZABLE) {
            String level = PgErrors.translating(() -> ctx.select(
                    DSL.function("current_setting", String.class, DSL.val("transaction_isolation"))).fetchSingle().value1());
            if (!"serializable".equals(level)) {
                throw new IllegalStateException("SERIALIZABLE transfer in the caller's transaction needs a SERIALIZABLE "
                        + "transaction, but it is " + level);
            }
        }
        return new TransferResult(Savepoints.unit(ctx, () -> Transfers.attempt(statements, ctx, request)), 1);
    }

    // ---------------------------------------------------------------- internals

    private TransferResult optimisticLoop(long from, long to, java.util.function.Supplier<TransferResult.Status> attempt) {
        for (int n = 1; ; n++) {
            try {
                return new TransferResult(PgErrors.translating(attempt), n);
            } catch (Transfers.VersionConflict conflict) {
                pauseBeforeRetry(n, conflict.accountId());
            }
        }
    }

    private void pauseBeforeRetry(int failedAttempts, long accountId) {
        if (failedAttempts >= policy.maxAttempts()) {
            throw new OptimisticConflictException(accountId, failedAttempts);
        }
        Duration pause = policy.backoff(failedAttempts, ThreadLocalRandom.current().nextDouble());
        listener.onRetry(failedAttempts, new OptimisticConflictException(accountId, failedAttempts), pause);
        try {
            sleeper.sleep(pause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OptimisticConflictException(accountId, failedAttempts);
        }
    }

    static boolean exists(DSLContext tx, long id) {
        return PgErrors.translating(() -> tx.fetchExists(ACCOUNTS, ACCOUNTS.ID.eq(id)));
    }

    static Account toAccount(AccountsRecord r) {
        return new Account(r.getId(), r.getBalance(), r.getVersion(), r.getUpdatedAt());
    }
}

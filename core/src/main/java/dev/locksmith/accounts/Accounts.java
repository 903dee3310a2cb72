package dev.locksmith.accounts;

import static dev.locksmith.codegen.Tables.ACCOUNTS;

import dev.locksmith.LockWait;
import dev.locksmith.Locksmith;
import dev.locksmith.RetryPolicy;
import dev.locksmith.Transactions;
import dev.locksmith.codegen.tables.records.AccountsRecord;
import dev.locksmith.internal.Distribution;
import dev.locksmith.internal.Errors;
import dev.locksmith.internal.Observing;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.internal.TransactionGuard;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.math.BigDecimal;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import org.jooq.DSLContext;
import org.jooq.InsertValuesStep1;

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
 * {@link dev.locksmith.exception.LocksmithException} subclasses.
 *
 * <p>Thread-safe and stateless apart from its configuration; share one instance.
 *
 * <p>The hot statements are rendered once, at construction, with the settings of the
 * {@code DSLContext} given here, and run on the connection of the {@code DSLContext} passed to
 * each call, through its jOOQ configuration (so its {@code ExecuteListener}s see them), or
 * straight through JDBC when the {@code DSLContext} given here says
 * {@link dev.locksmith.ExecutionMode#RAW_JDBC} (docs/operations.md, "Execution modes").
 *
 * <p><b>Citus.</b> Where Citus distributes the accounts table by id (the schema's Citus layout),
 * every statement names one account, so it runs on one worker: two accounts are locked or read
 * one after the other in ascending id order, and a transfer between accounts on two workers
 * commits through Citus's two-phase commit. {@link TransferStrategy#SERIALIZABLE} is refused
 * there with {@link UnsupportedOperationException} (Citus does not make a transaction across
 * workers serializable); the other strategies keep their guarantees. Whether the table is
 * distributed is looked up once per instance, on the first call that needs to know.
 */
public final class Accounts {

    private final DSLContext dsl;
    private final Transactions transactions;
    private final TransferRunner runner;
    private final Distribution distribution;
    private final SchemaMapping schema;
    private final Observing observing;

    /**
     * The accounts in {@code locksmith}'s environment, retried with {@link RetryPolicy#defaults()}.
     *
     * @param locksmith the environment: schema, execution mode, observer
     */
    public Accounts(Locksmith locksmith) {
        this(locksmith.dsl());
    }

    /**
     * The accounts in {@code locksmith}'s environment, retried with {@code policy}.
     *
     * @param locksmith the environment: schema, execution mode, observer
     * @param policy how transfers and compare-and-swap retry
     */
    public Accounts(Locksmith locksmith, RetryPolicy policy) {
        this(locksmith.dsl(), policy);
    }

    /**
     * Accounts on {@code dsl} with {@link RetryPolicy#defaults()}.
     *
     * @param dsl where own transactions start, and whose settings (schema mapping, dialect)
     *     the statements are rendered with
     */
    public Accounts(DSLContext dsl) {
        this(dsl, RetryPolicy.defaults());
    }

    /**
     * Accounts on {@code dsl}, retrying under {@code policy}; the policy also sets how long a
     * failed {@code COMMIT}'s outcome is looked for and who hears of retries.
     *
     * @param dsl where own transactions start, and whose settings (schema mapping, dialect)
     *     the statements are rendered with
     * @param policy retries of whole transactions and of lost compare-and-swap races
     */
    public Accounts(DSLContext dsl, RetryPolicy policy) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
        Objects.requireNonNull(policy, "policy");
        this.transactions = new Transactions(dsl, policy);
        this.distribution = new Distribution(dsl, ACCOUNTS, ACCOUNTS.ID.getName());
        this.schema = SchemaMapping.of(dsl);
        this.observing = Observing.of(dsl);
        this.runner = new TransferRunner(dsl, policy, transactions, distribution, observing);
    }

    // ---------------------------------------------------------------- open and read

    /**
     * Opens an account in its own, auto-committed transaction. Takes no lock that anyone else
     * could wait on (the new row is invisible to others until committed).
     *
     * @param openingBalance zero or more, at most two decimal places
     * @return the new account, as inserted (id, balance at scale 2, version 0, database time)
     * @throws IllegalArgumentException when the balance is negative or has more decimal places
     */
    public Account open(BigDecimal openingBalance) {
        return open(dsl, openingBalance);
    }

    /**
     * Opens an account in the caller's transaction.
     *
     * @param tx the caller's transaction ({@code configuration.dsl()} inside
     *     {@code dsl.transaction(...)}); what this writes commits or rolls back with it
     * @param openingBalance zero or more, at most two decimal places
     * @return the new account, as inserted (visible to others once {@code tx} commits)
     * @throws IllegalArgumentException when the balance is negative or has more decimal places
     */
    public Account open(DSLContext tx, BigDecimal openingBalance) {
        DSLContext ctx = schema.on(tx);
        BigDecimal balance = Amounts.nonNegative("openingBalance", openingBalance);
        return Errors.translating(() -> toAccount(ctx.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, balance)
                .returning()
                .fetchSingle()));
    }

    /**
     * Opens one account per balance with a single multi-row insert, in the caller's
     * transaction; returns them in the order given.
     *
     * @param tx the caller's transaction ({@code configuration.dsl()} inside
     *     {@code dsl.transaction(...)}); what this writes commits or rolls back with it
     * @param openingBalances each zero or more, at most two decimal places; may be empty
     * @return the new accounts, in the order of {@code openingBalances}; empty (and no statement
     *     sent) for an empty list
     * @throws IllegalArgumentException when any balance is invalid, before anything is inserted
     */
    public List<Account> openAll(DSLContext tx, List<BigDecimal> openingBalances) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(openingBalances, "openingBalances");
        if (openingBalances.isEmpty()) {
            return List.of();
        }
        List<BigDecimal> balances = openingBalances.stream()
                .map(b -> Amounts.nonNegative("openingBalance", b))
                .toList();
        return Errors.translating(() -> {
            InsertValuesStep1<AccountsRecord, BigDecimal> insert = ctx.insertInto(ACCOUNTS, ACCOUNTS.BALANCE);
            for (BigDecimal balance : balances) {
                insert = insert.values(balance);
            }
            // Ids come from the sequence in the order of the rows given; Citus returns the rows of
            // a distributed insert grouped by shard, so the order is restored from the ids.
            return insert.returning().fetch().stream()
                    .map(Accounts::toAccount)
                    .sorted(java.util.Comparator.comparingLong(Account::id))
                    .toList();
        });
    }

    /**
     * Reads an account without locking it: the value can be stale by the time the caller acts
     * on it; lock it ({@link #lockForUpdate(DSLContext, long, LockWait)}) or use a guarded or
     * compare-and-swap write to act on it safely. Never waits for writers.
     *
     * @param tx the transaction (or auto-commit context) to read in; its snapshot decides what
     *     is seen
     * @param id the account id
     * @return the account; empty when there is none
     */
    public Optional<Account> find(DSLContext tx, long id) {
        DSLContext ctx = schema.on(tx);
        return Errors.translating(() -> ctx.selectFrom(ACCOUNTS)
                .where(ACCOUNTS.ID.eq(id))
                .fetchOptional()
                .map(Accounts::toAccount));
    }

    /**
     * Reads an account that must exist, without locking it (as {@link #find}).
     *
     * @param tx the transaction (or auto-commit context) to read in
     * @param id the account id
     * @return the account
     * @throws AccountNotFoundException if there is none
     */
    public Account get(DSLContext tx, long id) {
        DSLContext ctx = schema.on(tx);
        return find(ctx, id).orElseThrow(() -> new AccountNotFoundException(id));
    }

    // ---------------------------------------------------------------- pessimistic

    /**
     * {@code SELECT ... FOR UPDATE} of one account, waiting as {@code wait} says. The row stays
     * locked until the caller's transaction ends.
     *
     * @param tx the caller's transaction ({@code configuration.dsl()} inside
     *     {@code dsl.transaction(...)}); what this writes commits or rolls back with it
     * @param id the account id
     * @param wait how long to wait while another transaction holds the row
     * @return the locked account; empty only with {@link LockWait#skipLocked()} when another
     *     transaction holds the row
     * @throws AccountNotFoundException if there is no such account
     * @throws dev.locksmith.exception.LockNotAvailableException for {@code noWait()} on a held row, or
     *     when an {@code upTo(...)} bound expires; the caller's transaction is then aborted
     * @throws IllegalStateException when {@code tx} is in auto-commit mode, whatever the wait:
     *     the lock would end with the statement (and a bound would not hold)
     */
    public Optional<Account> lockForUpdate(DSLContext tx, long id, LockWait wait) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(wait, "wait");
        TransactionGuard.requireOpen(ctx, "lockForUpdate");
        Optional<Account> locked = observing.observe(
                () -> new Operation.LockRows(ACCOUNTS.getName(), wait.kind()),
                () -> wait.run(
                        ctx,
                        () -> wait.applyTo(ctx.selectFrom(ACCOUNTS)
                                        .where(ACCOUNTS.ID.eq(id))
                                        .forUpdate())
                                .fetchOptional()
                                .map(Accounts::toAccount)),
                a -> Outcome.OK);
        if (locked.isEmpty() && !exists(ctx, id)) {
            throw new AccountNotFoundException(id);
        }
        return locked;
    }

    /**
     * Locks several accounts with one {@code SELECT ... ORDER BY id FOR UPDATE}: rows are
     * locked in ascending id order whatever order {@code ids} has, so two callers locking
     * overlapping sets cannot deadlock. The rows stay locked until the caller's transaction ends.
     *
     * @param tx the caller's transaction ({@code configuration.dsl()} inside
     *     {@code dsl.transaction(...)}); what this writes commits or rolls back with it
     * @param ids the account ids, in any order, no nulls; duplicates count once; empty locks
     *     nothing and sends nothing
     * @param wait how long to wait for each row another transaction holds
     * @return the locked accounts in ascending id order; with {@link LockWait#skipLocked()},
     *     only those no other transaction holds
     * @throws AccountNotFoundException naming the first missing id
     * @throws IllegalStateException when {@code tx} is in auto-commit mode, as for one account
     */
    public List<Account> lockForUpdate(DSLContext tx, Collection<Long> ids, LockWait wait) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(ids, "ids");
        Objects.requireNonNull(wait, "wait");
        TransactionGuard.requireOpen(ctx, "lockForUpdate");
        TreeSet<Long> sorted = new TreeSet<>();
        for (Long id : ids) {
            sorted.add(Objects.requireNonNull(id, "ids must not contain null"));
        }
        if (sorted.isEmpty()) {
            return List.of();
        }
        List<Account> locked = observing.observe(
                () -> new Operation.LockRows(ACCOUNTS.getName(), wait.kind()),
                () -> wait.run(
                        ctx,
                        () -> distribution.distributed(ctx)
                                ? lockOneByOne(ctx, sorted, wait)
                                : wait
                                        .applyTo(ctx.selectFrom(ACCOUNTS)
                                                .where(ACCOUNTS.ID.in(sorted))
                                                .orderBy(ACCOUNTS.ID)
                                                .forUpdate())
                                        .fetch()
                                        .stream()
                                        .map(Accounts::toAccount)
                                        .toList()),
                a -> Outcome.OK);
        if (locked.size() < sorted.size()) {
            List<Long> present = Errors.translating(() -> ctx.select(ACCOUNTS.ID)
                    .from(ACCOUNTS)
                    .where(ACCOUNTS.ID.in(sorted))
                    .fetch(ACCOUNTS.ID));
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
     * Under contention it waits, with no bound of its own, for the transaction that holds the
     * row's lock (a {@code lock_timeout} of the session or role still applies), then applies the
     * guard to the balance that transaction left.
     *
     * @param tx the caller's transaction ({@code configuration.dsl()} inside
     *     {@code dsl.transaction(...)}); what this writes commits or rolls back with it
     * @param id the account id
     * @param amount positive, at most two decimal places
     * @return true if applied; false, with nothing written, when the balance is too low
     * @throws AccountNotFoundException if there is no such account
     */
    public boolean debit(DSLContext tx, long id, BigDecimal amount) {
        DSLContext ctx = schema.on(tx);
        BigDecimal value = Amounts.positive("amount", amount);
        Objects.requireNonNull(ctx, "ctx");
        boolean applied = Transfers.debit(runner.statements(ctx), ctx, id, value);
        if (!applied && !exists(ctx, id)) {
            throw new AccountNotFoundException(id);
        }
        return applied;
    }

    /**
     * Adds {@code amount} to the balance in one statement. Locks the row until the caller's
     * transaction ends. Under contention it waits, with no bound of its own, for the transaction
     * that holds the row's lock (a {@code lock_timeout} of the session or role still applies).
     *
     * @param tx the caller's transaction ({@code configuration.dsl()} inside
     *     {@code dsl.transaction(...)}); what this writes commits or rolls back with it
     * @param id the account id
     * @param amount positive, at most two decimal places
     * @return true (a credit always applies to an existing account)
     * @throws AccountNotFoundException if there is no such account
     */
    public boolean credit(DSLContext tx, long id, BigDecimal amount) {
        DSLContext ctx = schema.on(tx);
        BigDecimal value = Amounts.positive("amount", amount);
        Objects.requireNonNull(ctx, "ctx");
        if (!Transfers.credit(runner.statements(ctx), ctx, id, value)) {
            throw new AccountNotFoundException(id);
        }
        return true;
    }

    // ---------------------------------------------------------------- optimistic

    /**
     * Compare-and-swap: sets the balance to {@code newBalance} and bumps {@code version} only if
     * the version is still {@code expectedVersion}. Takes no lock before the write; the write
     * itself locks the row until the caller's transaction ends. When another transaction is
     * writing the row, it waits for that one to end and then finds the version moved on.
     *
     * @param tx the caller's transaction ({@code configuration.dsl()} inside
     *     {@code dsl.transaction(...)}); what this writes commits or rolls back with it
     * @param id the account id
     * @param expectedVersion the {@link Account#version()} the caller read
     * @param newBalance zero or more, at most two decimal places
     * @return true if applied; false, with nothing written, when the version had moved on
     * @throws AccountNotFoundException if there is no such account
     */
    public boolean updateIfVersion(DSLContext tx, long id, long expectedVersion, BigDecimal newBalance) {
        DSLContext ctx = schema.on(tx);
        BigDecimal balance = Amounts.nonNegative("newBalance", newBalance);
        Objects.requireNonNull(ctx, "ctx");
        boolean applied = Transfers.compareAndSwap(runner.statements(ctx), ctx, id, expectedVersion, balance);
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
     * {@link dev.locksmith.exception.SerializationFailureException} instead. Takes no lock to read; the
     * successful write locks the row until the caller's transaction ends. Between lost races it
     * sleeps for the policy's backoff on the calling thread, while {@code tx} stays open.
     *
     * @param tx the caller's transaction ({@code configuration.dsl()} inside
     *     {@code dsl.transaction(...)}); what this writes commits or rolls back with it
     * @param id the account id
     * @param change computes the new balance from the current one; may run several times, so it
     *     must be a pure function; its result must be zero or more at scale 2
     * @return the account as written, read back after the write (one more round trip; exact in
     *     an open transaction, which holds the row's lock until it ends)
     * @throws AccountNotFoundException if there is no such account
     * @throws OptimisticConflictException when every attempt lost the race (or the thread was
     *     interrupted during a pause)
     */
    public Account updateOptimistically(DSLContext tx, long id, UnaryOperator<BigDecimal> change) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(change, "change");
        for (int attempt = 1; ; attempt++) {
            Account current = get(ctx, id);
            BigDecimal next = Amounts.nonNegative("new balance", change.apply(current.balance()));
            if (Transfers.compareAndSwap(runner.statements(ctx), ctx, id, current.version(), next)) {
                // Read back for updated_at, which the database sets: Account requires it.
                return get(ctx, id);
            }
            runner.pauseBeforeRetry(attempt, id);
        }
    }

    /**
     * {@link #updateOptimistically(DSLContext, long, UnaryOperator)} with each statement
     * auto-committed: the read and the compare-and-swap are separate transactions, and the
     * compare-and-swap is what keeps the update correct.
     *
     * @param id the account id
     * @param change computes the new balance from the current one; a pure function, may run
     *     several times
     * @return the account read back right after the write, in its own statement: a concurrent
     *     writer's later change may already be in it
     * @throws AccountNotFoundException if there is no such account
     * @throws OptimisticConflictException when every attempt lost the race
     */
    public Account updateOptimistically(long id, UnaryOperator<BigDecimal> change) {
        return updateOptimistically(dsl, id, change);
    }

    // ---------------------------------------------------------------- transfers

    /**
     * {@link #transfer(TransferRequest)} without a transfer id: moves {@code amount} in its own
     * transaction. Not idempotent: after a {@link dev.locksmith.exception.CommitOutcomeUnknownException}
     * the caller cannot tell whether to try again; give a transfer id when that matters.
     *
     * @param from the account debited
     * @param to the account credited; not {@code from}
     * @param amount positive, at most two decimal places
     * @param strategy how the transfer is kept correct under contention
     * @return whether the money moved, and after how many attempts
     * @throws AccountNotFoundException if either account does not exist
     * @throws UnsupportedOperationException for {@code SERIALIZABLE} where Citus distributes the
     *     accounts table (see the class comment); nothing is written
     * @throws OptimisticConflictException for {@code OPTIMISTIC} when every attempt lost
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
     * {@link dev.locksmith.exception.CommitOutcomeUnknownException}. Any other exception means nothing
     * changed. With a {@linkplain TransferRequest#transferId() transfer id}, calling again
     * after any failure is safe: a transfer that did commit is reported
     * {@link TransferResult.Status#ALREADY_TRANSFERRED} and not applied twice.
     *
     * <p>Both rows are locked (by the strategy's own means) until the transfer's transaction
     * commits, always in ascending id order, so concurrent transfers wait for each other but
     * never deadlock. Between attempts it sleeps for the policy's backoff on the calling thread.
     *
     * @param request the transfer, validated when it was built
     * @return whether the money moved, and after how many attempts
     * @throws AccountNotFoundException if either account does not exist
     * @throws UnsupportedOperationException for {@code SERIALIZABLE} where Citus distributes the
     *     accounts table (see the class comment); nothing is written
     * @throws OptimisticConflictException for {@code OPTIMISTIC} when every attempt lost
     * @throws IllegalArgumentException when the transfer id was used before for another transfer
     */
    public TransferResult transfer(TransferRequest request) {
        Objects.requireNonNull(request, "request");
        return observing.observe(
                () -> new Operation.Transfer(request.strategy(), true),
                () -> runner.ownTransaction(request),
                Accounts::outcome);
    }

    /**
     * {@link #transfer(DSLContext, TransferRequest)} without a transfer id.
     *
     * @param tx the caller's transaction ({@code configuration.dsl()} inside
     *     {@code dsl.transaction(...)}); what this writes commits or rolls back with it
     * @param from the account debited
     * @param to the account credited; not {@code from}
     * @param amount positive, at most two decimal places
     * @param strategy how the transfer is kept correct under contention
     * @return whether the money moved
     * @throws AccountNotFoundException if either account does not exist
     * @throws UnsupportedOperationException for {@code SERIALIZABLE} where Citus distributes the
     *     accounts table (see the class comment); nothing is written
     * @throws IllegalStateException when {@code tx} is in auto-commit mode, or for
     *     {@code SERIALIZABLE} when its transaction is not SERIALIZABLE
     */
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
     *
     * <p>The rows it locks (ascending id order) stay locked until the caller's transaction ends,
     * not just until this returns: keep the rest of that transaction short.
     *
     * @param tx the caller's transaction ({@code configuration.dsl()} inside
     *     {@code dsl.transaction(...)}); what this writes commits or rolls back with it
     * @param request the transfer
     * @return whether the money moved; {@code attempts} counts compare-and-swap rounds for
     *     {@code OPTIMISTIC} and is 1 otherwise
     * @throws AccountNotFoundException if either account does not exist
     * @throws UnsupportedOperationException for {@code SERIALIZABLE} where Citus distributes the
     *     accounts table (see the class comment); nothing is written
     * @throws OptimisticConflictException for {@code OPTIMISTIC} when every round lost
     * @throws IllegalStateException when {@code tx} is in auto-commit mode, or for
     *     {@code SERIALIZABLE} when its transaction is not SERIALIZABLE
     */
    public TransferResult transfer(DSLContext tx, TransferRequest request) {
        DSLContext ctx = schema.on(tx);
        Objects.requireNonNull(request, "request");
        TransactionGuard.requireOpen(ctx, "transfer(ctx, ...)");
        return observing.observe(
                () -> new Operation.Transfer(request.strategy(), false),
                () -> runner.callersTransaction(ctx, request),
                Accounts::outcome);
    }

    private static Outcome outcome(TransferResult result) {
        return switch (result.status()) {
            case TRANSFERRED -> Outcome.OK;
            case INSUFFICIENT_FUNDS -> Outcome.INSUFFICIENT_FUNDS;
            case ALREADY_TRANSFERRED -> Outcome.ALREADY_TRANSFERRED;
        };
    }

    // ---------------------------------------------------------------- internals

    /**
     * On Citus, where a lock on rows of several shards is refused: one router statement per id,
     * in ascending order (the order {@code sorted} iterates in), so two callers locking
     * overlapping sets cannot deadlock.
     */
    private static List<Account> lockOneByOne(DSLContext ctx, java.util.SortedSet<Long> sorted, LockWait wait) {
        List<Account> locked = new java.util.ArrayList<>(sorted.size());
        for (long id : sorted) {
            wait.applyTo(ctx.selectFrom(ACCOUNTS).where(ACCOUNTS.ID.eq(id)).forUpdate())
                    .fetchOptional()
                    .map(Accounts::toAccount)
                    .ifPresent(locked::add);
        }
        return locked;
    }

    static boolean exists(DSLContext tx, long id) {
        return Errors.translating(() -> tx.fetchExists(ACCOUNTS, ACCOUNTS.ID.eq(id)));
    }

    static Account toAccount(AccountsRecord r) {
        return new Account(r.getId(), r.getBalance(), r.getVersion(), r.getUpdatedAt());
    }
}

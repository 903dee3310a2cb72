package dev.locksmith.internal;

import dev.locksmith.CommitHook;
import dev.locksmith.ExecutionMode;
import dev.locksmith.PoolingMode;
import dev.locksmith.observe.LocksmithObserver;
import java.sql.Connection;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.jooq.ConnectionProvider;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.jooq.impl.DataSourceConnectionProvider;
import org.jspecify.annotations.Nullable;

/**
 * The settings of one {@code Locksmith} environment, as they travel with the {@code DSLContext}
 * it made: the schema (also rendered by the context's render mapping), how its connections reach
 * the server, how hot statements execute, the observer, and the data source behind the context
 * (for the connections workers and session locks hold). A repository built from a context reads
 * them once, with {@link #of(DSLContext)}; a context that no {@code Locksmith} made has the
 * defaults. Only {@code Locksmith} puts one into a context: there is no other route.
 * <b>Internal: not API.</b>
 *
 * @param schema the schema locksmith's tables were migrated to
 * @param poolingMode how the connections reach the server
 * @param executionMode how hot statements execute
 * @param observer the observer to tell
 * @param dataSource where the context's connections come from, when they come from a data source
 * @param commitHooks what else tells locksmith when a transaction commits (Spring's, for one)
 */
public record Environment(
        String schema,
        PoolingMode poolingMode,
        ExecutionMode executionMode,
        LocksmithObserver observer,
        @Nullable DataSource dataSource,
        List<CommitHook> commitHooks) {

    private static final String KEY = Environment.class.getName();

    /**
     * Checks every field.
     *
     * @param schema a valid schema name
     * @param poolingMode not null
     * @param executionMode not null
     * @param observer not null
     * @param dataSource the data source, or null
     * @param commitHooks the commit hooks, in the order they are asked
     */
    public Environment {
        SchemaMapping.requireName(schema);
        commitHooks = List.copyOf(commitHooks);
        Objects.requireNonNull(poolingMode, "poolingMode");
        Objects.requireNonNull(executionMode, "executionMode");
        Objects.requireNonNull(observer, "observer");
    }

    /**
     * The environment {@code dsl} carries: the one a {@code Locksmith} put there, or the defaults
     * with the data source behind {@code dsl}'s connection provider.
     *
     * @param dsl a context
     * @return its environment
     */
    public static Environment of(DSLContext dsl) {
        Objects.requireNonNull(dsl, "dsl");
        if (dsl.configuration().data(KEY) instanceof Environment carried) {
            return carried;
        }
        return new Environment(
                SchemaMapping.DEFAULT,
                PoolingMode.SESSION,
                ExecutionMode.JOOQ,
                LocksmithObserver.NONE,
                dataSourceOf(dsl),
                List.of());
    }

    /**
     * A context like {@code dsl} (its connection provider, transaction provider, listeners and
     * other settings kept) that renders locksmith's tables in this schema and carries this
     * environment.
     *
     * @param dsl the context to derive from
     * @return the derived context
     */
    public DSLContext apply(DSLContext dsl) {
        DSLContext mapped = SchemaMapping.of(schema).on(dsl);
        org.jooq.Configuration derived = mapped.configuration().derive();
        derived.data(KEY, this);
        return listening(DSL.using(derived));
    }

    /**
     * {@code dsl}, or a context derived from it, whose jOOQ transactions tell locksmith when they
     * commit ({@link AfterCommit#LISTENER}).
     *
     * @param dsl a context
     * @return a context carrying the listener
     */
    public static DSLContext listening(DSLContext dsl) {
        for (org.jooq.TransactionListenerProvider p : dsl.configuration().transactionListenerProviders()) {
            if (p.provide() == AfterCommit.LISTENER) {
                return dsl;
            }
        }
        return DSL.using(dsl.configuration().derive().setAppending(AfterCommit.LISTENER));
    }

    /**
     * Arranges for {@code action} to run once the transaction open on this thread commits: one a
     * commit hook knows of, or a jOOQ transaction started on an environment's context.
     *
     * @param action quick, must not throw
     * @return false when no transaction locksmith can see is open on this thread
     */
    public boolean afterCommit(Runnable action) {
        // Hooks first: a jOOQ transaction nested in one a hook manages (Spring's) ends before the
        // outer one commits; the hook knows the real commit.
        return afterCommitByHook(action) || AfterCommit.register(action);
    }

    /**
     * {@link #afterCommit} by a commit hook only: for a transaction another transaction manager
     * (Spring's) runs, which locksmith cannot tell will not be prepared (an XA transaction is).
     *
     * @param action quick, must not throw
     * @return false when no hook knows of a transaction open on this thread
     */
    public boolean afterCommitByHook(Runnable action) {
        for (CommitHook hook : commitHooks) {
            if (hook.afterCommit(action)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@link CommitHook#afterOnePhaseCommit} of the first hook that knows the transaction open on
     * this thread to be a local one on {@code statement}'s session, committed in one phase.
     *
     * @param statement the context the enqueue runs on
     * @param committed quick, must not throw
     * @param otherwise quick, must not throw
     * @return false when no hook says so (nothing is arranged then)
     */
    public boolean afterOnePhaseCommitByHook(DSLContext statement, Runnable committed, Runnable otherwise) {
        if (commitHooks.isEmpty()) {
            return false;
        }
        Predicate<Connection> session = AfterCommit.sessionOf(statement);
        for (CommitHook hook : commitHooks) {
            if (hook.afterOnePhaseCommit(session, committed, otherwise)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The data source behind {@code dsl}'s connections: that of a
     * {@link DataSourceConnectionProvider} (what {@code DSL.using(dataSource, ...)} and Spring
     * Boot's jOOQ auto-configuration make), else null.
     *
     * @param dsl a context
     * @return the data source, or null
     */
    public static @Nullable DataSource dataSourceOf(DSLContext dsl) {
        ConnectionProvider provider = dsl.configuration().connectionProvider();
        return provider instanceof DataSourceConnectionProvider pooled ? pooled.dataSource() : null;
    }

    /**
     * The data source, for a part of locksmith that holds connections of its own.
     *
     * @param what named in the message, e.g. {@code "a worker"}
     * @return the data source
     * @throws IllegalArgumentException when the environment was made from a context whose
     *     connections do not come from a data source
     */
    public DataSource requireDataSource(String what) {
        if (dataSource == null) {
            throw new IllegalArgumentException(what + " needs connections of its own, from a DataSource: build the "
                    + "Locksmith environment from one (Locksmith.builder(dataSource)), or from a DSLContext whose "
                    + "connection provider hands out a DataSource's connections (a DataSourceConnectionProvider, as "
                    + "DSL.using(dataSource, ...) and Spring Boot's jOOQ auto-configuration make)");
        }
        return dataSource;
    }
}

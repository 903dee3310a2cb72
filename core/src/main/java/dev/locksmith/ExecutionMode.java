package dev.locksmith;

/**
 * How the repositories ({@code JobQueue}, {@code ChannelAccountPool}, {@code Accounts}) execute
 * their hot statements: claims, heartbeats and completion of jobs; acquire, release and extend of
 * channel accounts; the steps of transfers, guarded updates and compare-and-swap.
 *
 * <p>Those statements are written in jOOQ's DSL and rendered once, when the repository is
 * constructed; what this chooses is how each execution reaches the database. Either way it runs
 * on the connection of the {@code DSLContext} passed to the call, inside the caller's transaction
 * when there is one.
 *
 * <p>The choice is part of the {@link Locksmith} environment the repositories are built from
 * ({@link Locksmith.Builder#executionMode}); a repository reads it once, at construction.
 */
public enum ExecutionMode {

    /**
     * Through the jOOQ {@code Configuration} of the {@code DSLContext} passed to each call: its
     * {@code ExecuteListener}s (logging, tracing, slow-query detection, Spring's exception
     * translation) see every statement with its SQL and bind values, and its connection provider,
     * query timeout, max rows, fetch size and diagnostics apply. The settings the pre-rendered SQL
     * depends on are pinned for these statements (indexed bind values, prepared statements), so
     * no setting of yours can break them. The default.
     *
     * <p>jOOQ's execution machinery costs about as much client CPU per statement as the
     * PostgreSQL driver's own work. When the configuration has nothing it would call or apply (no
     * {@code ExecuteListener}; jOOQ's own logging listener only counts when its logger is at
     * DEBUG, as jOOQ itself decides; default query timeout, max rows, fetch size and poolable; no
     * diagnostics connection), the same statement is sent with the same bind values on a
     * connection of the same connection provider without it. Add a listener and every statement
     * goes through jOOQ (docs/operations.md, "Execution modes", has the cost of both).
     */
    JOOQ,

    /**
     * Straight through JDBC on the connection of the {@code DSLContext} passed to each call,
     * never through jOOQ's execution, even when listeners are configured: the last microseconds
     * of client CPU per statement, for a small server whose cores the application shares. What
     * it gives up: your {@code ExecuteListener}s do not see these statements (no logging,
     * tracing, metrics or exception translation of them through jOOQ), and jOOQ's execution
     * settings (query timeout, max rows, fetch size) do not apply to them. Statements that are
     * not on the hot path still run through jOOQ.
     */
    RAW_JDBC;
}

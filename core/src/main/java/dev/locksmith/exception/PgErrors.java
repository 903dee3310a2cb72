package dev.locksmith.exception;

import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * The one place that maps PostgreSQL SQLStates to locksmith's exception types. Repositories,
 * the retry loop and the lock audit all go through here; code of your own that runs jOOQ
 * statements can use {@link #translate(Throwable)} to get the same types.
 *
 * <table>
 *   <caption>Mapping</caption>
 *   <tr><th>SQLState</th><th>Type</th></tr>
 *   <tr><td>40P01</td><td>{@link DeadlockException}</td></tr>
 *   <tr><td>40001</td><td>{@link SerializationFailureException}</td></tr>
 *   <tr><td>55P03</td><td>{@link LockNotAvailableException}</td></tr>
 *   <tr><td>23505</td><td>{@link UniqueViolationException}</td></tr>
 *   <tr><td>23514</td><td>{@link CheckViolationException}</td></tr>
 *   <tr><td>other 23xxx</td><td>{@link ConstraintViolationException}</td></tr>
 *   <tr><td>57014</td><td>{@link StatementTimeoutException}</td></tr>
 *   <tr><td>25P02</td><td>{@link TransactionAbortedException}</td></tr>
 *   <tr><td>57P01, 57P02, 57P03, 08xxx</td><td>{@link ConnectionTerminatedException}</td></tr>
 *   <tr><td>42P01 on a locksmith table</td><td>{@link SchemaNotAppliedException}</td></tr>
 *   <tr><td>anything else</td><td>{@link DatabaseException}</td></tr>
 * </table>
 */
public final class PgErrors {

    /** {@code deadlock_detected}: this transaction was the victim; {@link DeadlockException}. */
    public static final String DEADLOCK_DETECTED = "40P01";
    /** {@code serialization_failure}: {@link SerializationFailureException}. */
    public static final String SERIALIZATION_FAILURE = "40001";
    /** {@code lock_not_available}: {@code NOWAIT} or {@code lock_timeout}; {@link LockNotAvailableException}. */
    public static final String LOCK_NOT_AVAILABLE = "55P03";
    /** {@code unique_violation}: {@link UniqueViolationException}. */
    public static final String UNIQUE_VIOLATION = "23505";
    /** {@code check_violation}: {@link CheckViolationException}. */
    public static final String CHECK_VIOLATION = "23514";
    /** {@code query_canceled}: {@code statement_timeout} or a cancel request; {@link StatementTimeoutException}. */
    public static final String QUERY_CANCELED = "57014";
    /** {@code in_failed_sql_transaction}: an earlier error aborted the transaction; {@link TransactionAbortedException}. */
    public static final String IN_FAILED_SQL_TRANSACTION = "25P02";
    /** {@code admin_shutdown}, such as {@code pg_terminate_backend}: {@link ConnectionTerminatedException}. */
    public static final String ADMIN_SHUTDOWN = "57P01";
    /** {@code undefined_table}: {@link SchemaNotAppliedException} when the table is locksmith's. */
    public static final String UNDEFINED_TABLE = "42P01";

    private static final Pattern MISSING_RELATION =
            Pattern.compile("relation \"(?:([^\"]+)\\.)?([^\".]+)\" does not exist");
    private static final Map<String, String> MODULE_OF_TABLE = Map.of(
            "jobs",
            "QUEUE",
            "schedules",
            "QUEUE",
            "channel_accounts",
            "POOL",
            "accounts",
            "ACCOUNTS",
            "account_transfers",
            "ACCOUNTS",
            "lock_wait_event",
            "AUDIT",
            "deadlock_event",
            "AUDIT");

    private PgErrors() {}

    /**
     * Translates {@code failure} into a {@link LocksmithException}. A LocksmithException is
     * returned as it is; anything else is classified by the first SQLState found along its
     * cause chain, and kept as the cause. A failure with no SQLState becomes a
     * {@link DatabaseException} with a null SQLState.
     *
     * <p>Pure: no statement is sent and nothing is logged, so it is safe in a {@code catch} block
     * of code that runs its own jOOQ or JDBC statements.
     *
     * @param failure what a statement threw: a jOOQ {@code DataAccessException}, an
     *     {@link SQLException}, or anything with one of those along its cause chain
     * @return the typed exception, to throw; {@code failure} itself when it already is one
     */
    public static LocksmithException translate(Throwable failure) {
        if (failure instanceof LocksmithException locksmith) {
            return locksmith;
        }
        SQLException sql = findSqlException(failure);
        String state = sql == null ? null : sql.getSQLState();
        String message = sql == null ? String.valueOf(failure.getMessage()) : sql.getMessage();
        String constraint = constraintOf(sql);
        if (state == null) {
            return new DatabaseException(message, null, failure);
        }
        switch (state) {
            case DEADLOCK_DETECTED:
                return new DeadlockException(message, state, failure);
            case SERIALIZATION_FAILURE:
                return new SerializationFailureException(message, state, failure);
            case LOCK_NOT_AVAILABLE:
                return new LockNotAvailableException(message, state, failure);
            case UNIQUE_VIOLATION:
                return new UniqueViolationException(message, state, constraint, failure);
            case CHECK_VIOLATION:
                return new CheckViolationException(message, state, constraint, failure);
            case QUERY_CANCELED:
                return new StatementTimeoutException(message, state, failure);
            case IN_FAILED_SQL_TRANSACTION:
                return new TransactionAbortedException(message, state, failure);
            case ADMIN_SHUTDOWN:
            case "57P02":
            case "57P03":
                return new ConnectionTerminatedException(message, state, failure);
            case UNDEFINED_TABLE:
                LocksmithException missing = missingTable(message, state, failure);
                return missing != null ? missing : new DatabaseException(message, state, failure);
            default:
                if (state.startsWith("08")) {
                    return new ConnectionTerminatedException(message, state, failure);
                }
                if (state.startsWith("23")) {
                    return new ConstraintViolationException(message, state, constraint, failure);
                }
                return new DatabaseException(message, state, failure);
        }
    }

    /** A {@link SchemaNotAppliedException} when {@code message} names a locksmith table, else null. */
    private static @Nullable LocksmithException missingTable(
            @Nullable String message, String state, Throwable failure) {
        Matcher m = MISSING_RELATION.matcher(String.valueOf(message));
        if (!m.find() || !MODULE_OF_TABLE.containsKey(m.group(2))) {
            return null;
        }
        String table = m.group(1) == null ? m.group(2) : m.group(1) + "." + m.group(2);
        String module = MODULE_OF_TABLE.get(m.group(2));
        return new SchemaNotAppliedException(
                "table " + table + " does not exist: apply the locksmith schema module "
                        + module + " (db/locksmith/" + module.toLowerCase(Locale.ROOT)
                        + ".xml, or LocksmithSchema.migrate "
                        + "with SchemaModule." + module + ") to this database and schema",
                state,
                table,
                module,
                failure);
    }

    /** The first SQLException with a SQLState along the cause chain, else the first one, else null. */
    static @Nullable SQLException findSqlException(Throwable failure) {
        SQLException first = null;
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql) {
                if (sql.getSQLState() != null) {
                    return sql;
                }
                if (first == null) {
                    first = sql;
                }
                SQLException next = sql.getNextException();
                if (next != null && next.getSQLState() != null) {
                    return next;
                }
            }
        }
        return first;
    }

    private static @Nullable String constraintOf(@Nullable SQLException sql) {
        if (sql instanceof PSQLException psql) {
            ServerErrorMessage server = psql.getServerErrorMessage();
            return server == null ? null : server.getConstraint();
        }
        return null;
    }
}

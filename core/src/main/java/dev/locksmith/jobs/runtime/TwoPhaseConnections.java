package dev.locksmith.jobs.runtime;

import dev.locksmith.exception.PgErrors;
import dev.locksmith.jobs.SideEffectCheck;
import dev.locksmith.jobs.TwoPhaseWorker;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConnectionProvider;

/**
 * The connections of a {@link TwoPhaseWorker}, each borrowed from its data source for one step
 * and given back at once: none is held while a side effect or a {@link SideEffectCheck} runs.
 * jOOQ runs on the borrowed connection with the worker's configuration (schema mapping,
 * observer, the user's listeners and settings), but never through jOOQ's
 * {@code transaction()}: it would send {@code COMMIT} after {@code PREPARE TRANSACTION} ended
 * the transaction, and {@code COMMIT PREPARED} cannot run inside one.
 */
final class TwoPhaseConnections {

    private final DataSource dataSource;
    private final DSLContext dsl;

    TwoPhaseConnections(DataSource dataSource, DSLContext dsl) {
        this.dataSource = dataSource;
        this.dsl = dsl;
    }

    /** A connection of the data source, in auto-commit mode; translated when it cannot be had. */
    Connection borrow() {
        try {
            Connection connection = dataSource.getConnection();
            try {
                if (!connection.getAutoCommit()) {
                    connection.setAutoCommit(true);
                }
            } catch (SQLException e) {
                closeQuietly(connection, e);
                throw e;
            }
            return connection;
        } catch (SQLException e) {
            throw PgErrors.translate(e);
        }
    }

    /** The worker's configuration on {@code connection}, which the caller manages. */
    DSLContext on(Connection connection) {
        return DSL.using(dsl.configuration().derive(new DefaultConnectionProvider(connection)));
    }

    /** Runs {@code work} on a borrowed connection in auto-commit mode, and gives it back. */
    <T> T autoCommit(Function<DSLContext, T> work) {
        Connection connection = borrow();
        T result;
        try {
            result = work.apply(on(connection));
        } catch (RuntimeException | Error e) {
            closeQuietly(connection, e);
            throw e;
        }
        try {
            connection.close();
        } catch (SQLException e) {
            throw PgErrors.translate(e);
        }
        return result;
    }

    /** Closes {@code connection}; a failure is added to {@code failure} as suppressed. */
    static void closeQuietly(Connection connection, Throwable failure) {
        try {
            connection.close();
        } catch (SQLException | RuntimeException closeFailure) {
            failure.addSuppressed(closeFailure);
        }
    }
}

package dev.locksmith.internal;

import org.jooq.Configuration;
import org.jooq.conf.DiagnosticsConnection;
import org.jooq.conf.QueryPoolable;
import org.jooq.conf.Settings;
import org.jooq.tools.JooqLogger;
import org.jooq.tools.LoggerListener;

/**
 * Whether anything would observe or change jOOQ's execution of a pre-rendered statement, beyond
 * what {@link RenderedQuery} does itself. <b>Internal: not API.</b>
 *
 * <p>jOOQ's execution machinery (an execute context, a derived configuration, rendering and
 * binding through its contexts, a cursor) costs about as much client CPU per statement as the
 * PostgreSQL driver's own work; on a busy two-core machine it took the pool and single-job claims
 * to 0.75-0.95 of raw JDBC, where raw execution gave 0.86-0.99. Its purpose is what it calls and
 * applies: when a configuration has no {@code ExecuteListener} (jOOQ adds its own
 * {@link LoggerListener} only when that logger is at DEBUG, and the server output listener only
 * when asked for), no diagnostics connection and default statement settings (query timeout, max
 * rows, fetch size, poolable), that machinery runs for no one, and {@link RenderedQuery} sends
 * the same SQL with the same JDBC calls on a connection of the same connection provider itself.
 * The moment any of these is configured, every statement goes through jOOQ.
 */
final class JooqObservers {

    /** The logger jOOQ checks before adding its {@link LoggerListener} (ExecuteListeners). */
    private static final JooqLogger LOGGER_LISTENER = JooqLogger.getLogger(LoggerListener.class);

    private JooqObservers() {}

    /** Whether executing through jOOQ on {@code configuration} would call or apply anything. */
    static boolean any(Configuration configuration) {
        if (configuration.executeListenerProviders().length > 0) {
            return true;
        }
        Settings settings = configuration.settings();
        return (!Boolean.FALSE.equals(settings.isExecuteLogging()) && LOGGER_LISTENER.isDebugEnabled())
                || positive(settings.getFetchServerOutputSize())
                || positive(settings.getQueryTimeout())
                || positive(settings.getMaxRows())
                || positive(settings.getFetchSize())
                || (settings.getQueryPoolable() != null && settings.getQueryPoolable() != QueryPoolable.DEFAULT)
                || settings.getDiagnosticsConnection() == DiagnosticsConnection.ON;
    }

    private static boolean positive(Integer value) {
        return value != null && value > 0;
    }
}

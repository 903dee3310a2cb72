package dev.locksmith.dashboard;

import java.sql.SQLException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every read of a page: a read-only transaction of its own with a transaction-scoped
 * {@code statement_timeout}, so that a page can neither write nor run longer than the timeout,
 * and a pooled connection goes back with no setting changed.
 */
final class Reads {

    private static final Logger LOG = LoggerFactory.getLogger(Reads.class);

    private final DSLContext dsl;
    private final String timeout;
    private final String schema;

    Reads(DashboardConfig config) {
        this.dsl = config.dsl();
        this.timeout = config.statementTimeout().toMillis() + "ms";
        this.schema = config.schema();
    }

    <T> T run(Function<DSLContext, T> work) {
        return dsl.transactionResult(c -> {
            DSLContext tx = c.dsl();
            // Must be the transaction's first statement; a transaction characteristic, not a
            // session setting.
            tx.query("SET TRANSACTION READ ONLY").execute();
            tx.select(DSL.function(
                            "set_config",
                            String.class,
                            DSL.inline("statement_timeout"),
                            DSL.val(timeout),
                            DSL.inline(true)))
                    .fetch();
            return work.apply(tx);
        });
    }

    /**
     * {@code render()}, or a box saying why that part of the page could not be read when the
     * reason is one the page can name: a table missing because its schema module is not applied,
     * or the statement timeout. Any other failure propagates, for {@link DashboardApp} to answer
     * with its generic error page and to log once: a database's message (the statement, the
     * values it refused) never reaches a page.
     */
    Html section(String what, Supplier<Html> render) {
        try {
            return render.get();
        } catch (RuntimeException e) {
            String state = sqlState(e);
            if ("42P01".equals(state)) {
                return Html.of(
                        "<p class=\"notice\">No {} here: its table is not in schema <code>{}</code> (schema module not applied).</p>",
                        what,
                        schema);
            }
            if ("57014".equals(state)) {
                LOG.warn("dashboard: reading {} took longer than the statement timeout ({})", what, timeout);
                return Html.of(
                        "<p class=\"error\">Reading {} took longer than the statement timeout ({}): narrow the filter.</p>",
                        what,
                        timeout);
            }
            throw e;
        }
    }

    static @Nullable String sqlState(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }
}

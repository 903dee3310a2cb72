package dev.locksmith.jobs;

import java.util.Objects;
import javax.sql.DataSource;
import org.jooq.ConnectionProvider;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.DataSourceConnectionProvider;

/**
 * Where a worker's connections come from: its transactions run on a {@link DSLContext} (the
 * user's, so that its settings, listeners and transaction provider apply, or one made from a
 * data source), and the connection it holds for {@code LISTEN} comes from the data source behind
 * it.
 */
record WorkerConnections(DSLContext dsl, DataSource dataSource) {

    static WorkerConnections of(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        return new WorkerConnections(DSL.using(dataSource, SQLDialect.POSTGRES), dataSource);
    }

    static WorkerConnections of(DSLContext dsl) {
        Objects.requireNonNull(dsl, "dsl");
        ConnectionProvider provider = dsl.configuration().connectionProvider();
        if (provider instanceof DataSourceConnectionProvider pooled) {
            return new WorkerConnections(dsl, pooled.dataSource());
        }
        throw new IllegalArgumentException("a worker needs a DSLContext whose connection provider hands out "
                + "connections of a DataSource (a DataSourceConnectionProvider, as DSL.using(dataSource, ...) and "
                + "Spring Boot's jOOQ auto-configuration make), because it holds connections of its own; this one has "
                + provider.getClass().getName() + ". Use builder(DataSource, ...) otherwise");
    }
}

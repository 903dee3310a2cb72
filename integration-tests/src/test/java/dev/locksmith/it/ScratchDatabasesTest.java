package dev.locksmith.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import java.sql.Connection;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/** The resolver's databases are gone after a run, even with connections still open to them. */
class ScratchDatabasesTest {

    @Test
    void closingASetDropsEveryDatabaseItCreated() throws Exception {
        PostgresServer server = TestPostgres.server();
        DSLContext admin = DSL.using(server.dataSource("postgres"), SQLDialect.POSTGRES);
        ScratchDatabases set = server.scratch("locksmith_resolver_check");
        ScratchDatabase one = set.create("one");
        ScratchDatabase two = set.create("two");
        assertThat(one.name()).startsWith(set.runPrefix()).isNotEqualTo(two.name());
        List<String> present = admin
                .fetchValues("SELECT datname::text FROM pg_database WHERE datname LIKE ?", set.runPrefix() + "%")
                .stream()
                .map(String::valueOf)
                .toList();
        assertThat(present).containsExactlyInAnyOrder(one.name(), two.name());

        try (Connection stillOpen = one.dataSource().getConnection()) {
            set.close();
        }

        assertThat(admin.fetchCount(DSL.selectFrom("pg_database").where("datname LIKE ?", set.runPrefix() + "%")))
                .isZero();
    }

    @Test
    void logsAndReportsWhichSourceWasUsed() {
        PostgresServer server = TestPostgres.server();
        assertThat(server.source()).isNotNull();
        assertThat(server.version()).startsWith("PostgreSQL ");
    }
}

package dev.locksmith.it.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.audit.HorizonHolder;
import dev.locksmith.audit.HorizonReport;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.provisioning.ScratchDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link HorizonReport} names what holds this database's MVCC horizon back, on real sessions:
 * a snapshot without a transaction id and a transaction that wrote both hold it (with their pid,
 * state, start and age), an idle session, the calling session and a session of another database do
 * not, a prepared transaction does, and a role without {@code pg_read_all_stats} still sees the
 * holder, without what PostgreSQL hides from it.
 */
class HorizonReportTest extends DatabaseTest {

    @BeforeAll
    void table() {
        dsl.execute("CREATE TABLE horizon_t (x int)");
    }

    private static int pid(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
            r.next();
            return r.getInt(1);
        }
    }

    private static long single(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }

    private List<HorizonHolder> sessionsOf(int pid) {
        return new HorizonReport(dsl)
                .holders().stream()
                        .filter(h -> h.kind() == HorizonHolder.Kind.BACKEND
                                && h.pid().isPresent()
                                && h.pid().getAsInt() == pid)
                        .toList();
    }

    @Test
    void aRepeatableReadSnapshotWithoutATransactionIdHoldsTheHorizon() throws Exception {
        try (Connection held = pool.getConnection()) {
            int pid = pid(held);
            held.setClientInfo("ApplicationName", "nightly-report");
            held.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            held.setAutoCommit(false);
            long xmin = single(held, "SELECT txid_snapshot_xmin(txid_current_snapshot()) % 4294967296");
            assertThat(single(
                            held,
                            "SELECT count(*) FROM pg_stat_activity WHERE pid = pg_backend_pid() "
                                    + "AND backend_xid IS NULL"))
                    .as("the snapshot has no transaction id")
                    .isOne();

            List<HorizonHolder> found = sessionsOf(pid);
            assertThat(found).hasSize(1);
            HorizonHolder h = found.get(0);
            assertThat(h.xmin()).isEqualTo(xmin);
            assertThat(h.xminAge()).isNotNegative();
            assertThat(h.application()).contains("nightly-report");
            assertThat(h.database()).contains(database.name());
            assertThat(h.state()).contains("idle in transaction");
            assertThat(h.since()).isPresent();
            assertThat(h.queryStart()).isPresent();
            assertThat(h.age()).isPresent();
            assertThat(h.query()).hasValueSatisfying(q -> assertThat(q).contains("pg_stat_activity"));
            assertThat(h.identity()).startsWith("session pid " + pid).contains("application nightly-report");
            held.rollback();
        }
    }

    @Test
    void aReadCommittedTransactionThatWroteHoldsTheHorizonAtItsTransactionIdOrBefore() throws Exception {
        try (Connection held = pool.getConnection()) {
            int pid = pid(held);
            held.setAutoCommit(false);
            try (Statement s = held.createStatement()) {
                s.execute("INSERT INTO horizon_t VALUES (1)");
            }
            long xid = single(held, "SELECT txid_current() % 4294967296");
            assertThat(dsl.fetchValue("SELECT backend_xid::text::bigint FROM pg_stat_activity WHERE pid = ?", pid))
                    .as("it has a transaction id")
                    .isEqualTo(xid);

            List<HorizonHolder> found = sessionsOf(pid);
            assertThat(found).hasSize(1);
            // its own id, or the xmin of a snapshot it still keeps (its catalog snapshot), older
            assertThat(found.get(0).xmin()).isLessThanOrEqualTo(xid);
            assertThat(found.get(0).xminAge()).isPositive();
            assertThat(found.get(0).state()).contains("idle in transaction");
            held.rollback();
            assertThat(sessionsOf(pid)).as("once it ended").isEmpty();
        }
    }

    @Test
    void idleSessionsTheCallerAndOtherDatabasesDoNotHoldIt() throws Exception {
        ScratchDatabase other = TestPostgres.freshEmpty("horizon_other");
        try (HikariDataSource otherPool = TestPostgres.pool(other, 2);
                Connection elsewhere = otherPool.getConnection();
                Connection idle = pool.getConnection()) {
            elsewhere.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            elsewhere.setAutoCommit(false);
            single(elsewhere, "SELECT 1");
            single(idle, "SELECT 1");
            int[] caller = new int[1];
            // the caller's own transaction, with a snapshot of its own
            List<HorizonHolder> seen = dsl.transactionResult(c -> {
                c.dsl().execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                caller[0] = c.dsl()
                        .select(DSL.field("pg_backend_pid()", Integer.class))
                        .fetchSingle()
                        .value1();
                return new HorizonReport(c.dsl()).holders();
            });
            List<Integer> pids = List.of(pid(elsewhere), pid(idle), caller[0]);
            assertThat(seen)
                    .noneMatch(h -> h.pid().isPresent() && pids.contains(h.pid().getAsInt()));
            assertThat(dsl.fetchValue(
                            "SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND backend_xmin IS NOT NULL",
                            pid(elsewhere)))
                    .as("the other database's session does hold a snapshot")
                    .isEqualTo(1L);
            elsewhere.rollback();
        } finally {
            TestPostgres.drop(other);
        }
    }

    @Test
    void aPreparedTransactionHoldsItUntilItIsResolved() throws Exception {
        int max = Integer.parseInt(dsl.fetchValue("SELECT current_setting('max_prepared_transactions')")
                .toString());
        assumeTrue(max > 0, "this server has max_prepared_transactions = 0 (as CI's PostgreSQL service has)");
        String gid = "horizon-" + UUID.randomUUID();
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO horizon_t VALUES (2)");
                s.execute("PREPARE TRANSACTION '" + gid + "'");
            }
            c.setAutoCommit(true);
        }
        try {
            List<HorizonHolder> holders = new HorizonReport(dsl)
                    .holders().stream()
                            .filter(h -> h.kind() == HorizonHolder.Kind.PREPARED_TRANSACTION)
                            .toList();
            assertThat(holders).hasSize(1);
            HorizonHolder h = holders.get(0);
            assertThat(h.kind()).isEqualTo(HorizonHolder.Kind.PREPARED_TRANSACTION);
            assertThat(h.name()).contains(gid);
            assertThat(h.pid()).isEmpty();
            assertThat(h.database()).contains(database.name());
            assertThat(h.since()).isPresent();
            assertThat(h.age()).isPresent();
            assertThat(h.identity())
                    .isEqualTo("prepared transaction '" + gid + "' (user "
                            + h.user().orElseThrow() + ")");
        } finally {
            dsl.execute("ROLLBACK PREPARED {0}", DSL.inline(gid));
        }
        assertThat(new HorizonReport(dsl).holders())
                .noneMatch(h -> h.kind() == HorizonHolder.Kind.PREPARED_TRANSACTION);
    }

    @Test
    void aRoleWithoutPgReadAllStatsStillFindsTheHolderWithoutWhatIsHidden() throws Exception {
        String role = "horizon_reader_" + UUID.randomUUID().toString().substring(0, 8);
        String password = UUID.randomUUID().toString();
        dsl.execute("CREATE ROLE {0} LOGIN PASSWORD {1}", DSL.name(role), DSL.inline(password));
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database.jdbcUrl());
        config.setUsername(role);
        config.setPassword(password);
        config.setMaximumPoolSize(2);
        try (HikariDataSource reader = new HikariDataSource(config);
                Connection held = pool.getConnection()) {
            int pid = pid(held);
            held.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            held.setAutoCommit(false);
            single(held, "SELECT 1");

            List<HorizonHolder> seen = new HorizonReport(DSL.using(reader, org.jooq.SQLDialect.POSTGRES))
                    .holders().stream()
                            .filter(h -> h.pid().isPresent() && h.pid().getAsInt() == pid)
                            .toList();
            assertThat(seen).hasSize(1);
            HorizonHolder h = seen.get(0);
            assertThat(h.kind()).isEqualTo(HorizonHolder.Kind.BACKEND);
            assertThat(h.user()).isPresent();
            assertThat(h.xminAge()).isNotNegative();
            assertThat(h.query()).as("<insufficient privilege> is no query").isEmpty();
            assertThat(h.since()).isEmpty();
            assertThat(h.age()).isEmpty();
            assertThat(h.state()).isEmpty();
            held.rollback();
        } finally {
            dsl.execute("DROP ROLE {0}", DSL.name(role));
        }
    }
}

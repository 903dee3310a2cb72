package dev.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.provisioning.ServerSettings;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What a run finds before it starts ({@link BenchSession#freshConnections()}): the pool's every
 * connection open, none of them carrying server-side state from an earlier run.
 */
class BenchSessionTest {

    private static final int POOL = 3;

    @Test
    void eachRunFindsThePoolsConnectionsOpenWithFreshSessions() throws Exception {
        try (BenchSession session = new BenchSession(ServerSettings.fromEnvironment(), POOL, "bench_session")) {
            int pid;
            try (Connection c = session.pool().getConnection();
                    Statement s = c.createStatement()) {
                pid = backend(s);
                // an earlier run's server-side state: a prepared statement and a LISTEN
                s.execute("PREPARE earlier AS SELECT 1");
                s.execute("LISTEN earlier_run");
                assertThat(count(s, "SELECT count(*) FROM pg_prepared_statements"))
                        .isEqualTo(1);
            }

            session.freshConnections();

            assertThat(session.pool().getHikariPoolMXBean().getTotalConnections())
                    .as("connections open before the run")
                    .isEqualTo(POOL);
            List<Connection> all = new ArrayList<>();
            Set<Integer> pids = new HashSet<>();
            try {
                for (int i = 0; i < POOL; i++) {
                    Connection c = session.pool().getConnection();
                    all.add(c);
                    try (Statement s = c.createStatement()) {
                        pids.add(backend(s));
                        assertThat(count(s, "SELECT count(*) FROM pg_prepared_statements"))
                                .isZero();
                        assertThat(count(s, "SELECT count(*) FROM pg_listening_channels()"))
                                .isZero();
                    }
                }
            } finally {
                for (Connection c : all) {
                    c.close();
                }
            }
            // the session was reset, not replaced by a new connection
            assertThat(pids).hasSize(POOL).contains(pid);
        }
    }

    private static int backend(Statement s) throws SQLException {
        return count(s, "SELECT pg_backend_pid()");
    }

    private static int count(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }
}

package dev.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.provisioning.ServerSettings;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What a run finds before it starts ({@link BenchSession#readyFor}): a variant in this JVM finds
 * its connections open, none of them carrying server-side state from an earlier run; pgbench
 * finds the connection slots its clients need.
 */
class BenchSessionTest {

    private static final int POOL = 3;

    /** A variant of the given kind; only {@link Workload.Variant#inThisJvm} is asked. */
    private static Workload.SelfTimed variant(boolean inThisJvm) {
        return new Workload.SelfTimed() {
            @Override
            public void prepare() {}

            @Override
            public double measure() {
                return 0;
            }

            @Override
            public long verify() {
                return 0;
            }

            @Override
            public boolean inThisJvm() {
                return inThisJvm;
            }
        };
    }

    private static final Workload.SelfTimed IN_JVM = variant(true);
    private static final Workload.Case CASE = new Workload.Case("case", 1, "units/s", IN_JVM, null);

    @Test
    void eachRunFindsThePoolsConnectionsOpenWithFreshSessions() throws Exception {
        try (BenchSession session = new BenchSession(ServerSettings.fromEnvironment(), POOL, "bench_session")) {
            long pid;
            try (Connection c = session.pool().getConnection()) {
                pid = Jdbc.queryLong(c, "SELECT pg_backend_pid()");
                // an earlier run's server-side state: a prepared statement and a LISTEN
                Jdbc.update(c, "PREPARE earlier AS SELECT 1");
                Jdbc.update(c, "LISTEN earlier_run");
                assertThat(Jdbc.queryLong(c, "SELECT count(*) FROM pg_prepared_statements"))
                        .isEqualTo(1);
            }

            session.readyFor(CASE, IN_JVM);

            assertThat(session.pool().getHikariPoolMXBean().getTotalConnections())
                    .as("connections open before the run")
                    .isEqualTo(POOL);
            List<Connection> all = new ArrayList<>();
            Set<Long> pids = new HashSet<>();
            try {
                for (int i = 0; i < POOL; i++) {
                    Connection c = session.pool().getConnection();
                    all.add(c);
                    pids.add(Jdbc.queryLong(c, "SELECT pg_backend_pid()"));
                    assertThat(Jdbc.queryLong(c, "SELECT count(*) FROM pg_prepared_statements"))
                            .isZero();
                    assertThat(Jdbc.queryLong(c, "SELECT count(*) FROM pg_listening_channels()"))
                            .isZero();
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

    @Test
    void pgbenchFindsItsConnectionSlotsAndThePoolKeepsWhatLeavesThemFree() throws Exception {
        try (BenchSession session = new BenchSession(ServerSettings.fromEnvironment(), POOL, "bench_session")) {
            session.readyFor(CASE, IN_JVM);
            assertThat(session.pool().getHikariPoolMXBean().getTotalConnections())
                    .isEqualTo(POOL);

            // one pgbench client beside three pooled connections: the server has room for both
            session.readyFor(CASE, variant(false));
            assertThat(session.pool().getHikariPoolMXBean().getTotalConnections())
                    .isEqualTo(POOL);

            // more clients than the server has slots: the pool closes all it holds
            Workload.Case crowded = new Workload.Case("crowded", 100_000, "units/s", IN_JVM, null);
            session.readyFor(crowded, variant(false));
            assertThat(session.pool().getHikariPoolMXBean().getTotalConnections())
                    .isZero();
        }
    }
}

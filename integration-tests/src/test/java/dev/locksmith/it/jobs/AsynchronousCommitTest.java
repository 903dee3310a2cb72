package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The wake-up signal commits without waiting for the WAL flush, for its own transaction only: on a
 * pool of one connection whose session says {@code synchronous_commit = on}, that connection still
 * says so after a wake-up went out on it, so no later transaction of the application on that
 * connection loses its durability.
 */
class AsynchronousCommitTest extends DatabaseTest {

    private HikariDataSource single;

    @BeforeEach
    void oneConnectionSayingOn() throws Exception {
        dsl.deleteFrom(JOBS).execute();
        single = TestPostgres.pool(database, 1);
        try (Connection c = single.getConnection();
                Statement s = c.createStatement()) {
            // this test's own pool: the session setting the library must leave as it found it
            s.execute("SET synchronous_commit = on");
        }
    }

    @AfterEach
    void closePool() {
        single.close();
    }

    private String synchronousCommitOfTheSession() throws Exception {
        try (Connection c = single.getConnection();
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SHOW synchronous_commit")) {
            r.next();
            return r.getString(1);
        }
    }

    @Test
    void aWakeUpSentAfterCommitLeavesTheSessionsSynchronousCommitAsItWas() throws Exception {
        JobQueue queue = new JobQueue(Locksmith.builder(single).build());
        try (Connection listener = pool.getConnection();
                Statement s = listener.createStatement()) {
            s.execute("LISTEN " + JobQueue.CHANNEL);
            Locksmith producing = Locksmith.builder(single).build();
            producing.dsl().transaction(c -> queue.enqueue(c.dsl(), NewJob.of("async-signal", "k")));
            // the signal went out on the one connection once this notification arrives
            PGConnection pg = listener.unwrap(PGConnection.class);
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            boolean signalled = false;
            while (!signalled && System.nanoTime() < deadline) {
                PGNotification[] got = pg.getNotifications(100);
                if (got != null) {
                    for (PGNotification n : got) {
                        signalled |= n.getParameter().equals("async-signal");
                    }
                }
            }
            assertThat(signalled).as("the wake-up was sent").isTrue();
            s.execute("UNLISTEN *");
        }
        assertThat(synchronousCommitOfTheSession()).isEqualTo("on");
    }
}

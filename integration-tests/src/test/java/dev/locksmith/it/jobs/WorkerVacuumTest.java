package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Workers VACUUM the jobs table themselves when it holds many dead rows (every claim leaves
 * one), rather than waiting for autovacuum's next visit or for none at all where it is off; a
 * role that does not own the table is told so once. The table's {@code vacuum_count} counts
 * only manual VACUUMs (autovacuum has its own counter), and nothing else in this database runs
 * one.
 */
class WorkerVacuumTest extends DatabaseTest {

    private static final int JOBS = 15_000;

    private static final List<String> PARTITIONS = List.of("jobs_slot0", "jobs_slot1", "jobs_slot2", "jobs_slot3");

    private JobQueue queue;

    /** Holds the partitions' ACCESS SHARE locks, so that no worker can empty one by TRUNCATE. */
    private Connection partitionsHeld;

    @BeforeEach
    void setUp() throws SQLException {
        queue = new JobQueue(dsl);
        dsl.execute("DELETE FROM locksmith.jobs");
        // where autovacuum runs (the embedded server), it could clean the table before a worker
        // looks: these tests are about the worker's own VACUUM
        for (String partition : PARTITIONS) {
            dsl.execute("ALTER TABLE {0} SET (autovacuum_enabled = false)", DSL.name("locksmith", partition));
        }
        // A worker that drains 15,000 jobs also moves the table's generation on and empties the
        // drained partition by TRUNCATE, which would leave its VACUUM nothing to do: these tests
        // hold a lock that TRUNCATE waits for (an idle READ COMMITTED transaction holds no
        // snapshot, so VACUUM is not held back).
        partitionsHeld = pool.getConnection();
        partitionsHeld.setAutoCommit(false);
        try (Statement lock = partitionsHeld.createStatement()) {
            lock.execute("LOCK TABLE "
                    + String.join(
                            ", ", PARTITIONS.stream().map(p -> "locksmith." + p).toList()) + " IN ACCESS SHARE MODE");
        }
    }

    @AfterEach
    void resetTheTable() throws SQLException {
        partitionsHeld.rollback();
        partitionsHeld.close();
        for (String partition : PARTITIONS) {
            dsl.execute("ALTER TABLE {0} RESET (autovacuum_enabled)", DSL.name("locksmith", partition));
        }
    }

    private long manualVacuums() {
        return ((Number) dsl.fetchValue("SELECT coalesce(sum(vacuum_count), 0) FROM pg_stat_user_tables WHERE relid IN "
                        + "(SELECT inhrelid FROM pg_inherits WHERE inhparent = 'locksmith.jobs'::regclass)"))
                .longValue();
    }

    private void enqueue(String queueName) {
        for (int i = 0; i < JOBS; i += 1000) {
            queue.enqueueAll(dsl, Collections.nCopies(1000, NewJob.of(queueName, "noop")));
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(60), condition);
    }

    private long pending(String queueName) {
        return ((Number) dsl.fetchValue("SELECT count(*) FROM locksmith.jobs WHERE queue = {0}", DSL.val(queueName)))
                .longValue();
    }

    @Test
    void aTransactionalWorkerVacuumsTheTableItEmptied() throws Exception {
        long before = manualVacuums();
        enqueue("tx-vacuum");
        try (TransactionalWorker worker = TransactionalWorker.builder(pool, "tx-vacuum", (jobs, tx) -> {})
                .batchSize(100)
                .vacuumInterval(Duration.ofSeconds(1))
                .build()
                .start()) {
            await("the queue to drain", () -> pending("tx-vacuum") == 0);
            // the statistics reach the worker's check within seconds of the deletes
            await("a VACUUM by the worker", () -> manualVacuums() > before);
        }
        assertThat(((Number) dsl.fetchValue("SELECT sum(n_dead_tup) FROM pg_stat_user_tables WHERE relid IN "
                                + "(SELECT inhrelid FROM pg_inherits WHERE inhparent = 'locksmith.jobs'::regclass)"))
                        .longValue())
                .isLessThan(JOBS);
    }

    @Test
    void aJobWorkerVacuumsTheTableItEmptied() throws Exception {
        long before = manualVacuums();
        enqueue("lease-vacuum");
        try (JobWorker worker = JobWorker.builder(pool, "lease-vacuum", (job, tx) -> {})
                .vacuumInterval(Duration.ofSeconds(1))
                .build()
                .start()) {
            await("the queue to drain", () -> pending("lease-vacuum") == 0);
            await("a VACUUM by the worker", () -> manualVacuums() > before);
        }
    }

    @Test
    void aRoleThatDoesNotOwnTheTableIsToldOnceAndDoesNotVacuum() throws Exception {
        String role = "vacuum_tenant_" + UUID.randomUUID().toString().substring(0, 8);
        String password = UUID.randomUUID().toString();
        dsl.execute("CREATE ROLE {0} LOGIN PASSWORD {1}", DSL.name(role), DSL.inline(password));
        Logger log = (Logger) LoggerFactory.getLogger(TransactionalWorker.class);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        log.addAppender(events);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database.jdbcUrl());
        config.setUsername(role);
        config.setPassword(password);
        config.setMaximumPoolSize(6);
        try {
            dsl.execute("GRANT USAGE ON SCHEMA locksmith TO {0}", DSL.name(role));
            dsl.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON locksmith.jobs TO {0}", DSL.name(role));
            long before = manualVacuums();
            enqueue("tenant-vacuum");
            try (HikariDataSource tenant = new HikariDataSource(config);
                    TransactionalWorker worker = TransactionalWorker.builder(tenant, "tenant-vacuum", (jobs, tx) -> {})
                            .batchSize(100)
                            .vacuumInterval(Duration.ofSeconds(1))
                            .build()
                            .start()) {
                await("the queue to drain", () -> pending("tenant-vacuum") == 0);
                await(
                        "the warning",
                        () -> events.list.stream()
                                .anyMatch(
                                        e -> e.getFormattedMessage().contains("does not own it and cannot VACUUM it")));
            }
            assertThat(events.list.stream()
                            .filter(e -> e.getLevel() == Level.WARN
                                    && e.getFormattedMessage().contains("cannot VACUUM"))
                            .count())
                    .isOne();
            assertThat(manualVacuums()).isEqualTo(before);
        } finally {
            log.detachAppender(events);
            dsl.execute("DROP OWNED BY {0}", DSL.name(role));
            dsl.execute("DROP ROLE {0}", DSL.name(role));
        }
    }

    @Test
    void theIntervalIsZeroOrBetweenASecondAndAnHour() {
        TransactionalWorker.Builder tx = TransactionalWorker.builder(pool, "q", (jobs, t) -> {});
        JobWorker.Builder leased = JobWorker.builder(pool, "q", (job, jobTx) -> {});
        for (Duration bad : new Duration[] {Duration.ofMillis(999), Duration.ofMinutes(61), Duration.ofSeconds(-1)}) {
            assertThatThrownBy(() -> tx.vacuumInterval(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("vacuumInterval must be zero (off) or between 1 s and 1 h");
            assertThatThrownBy(() -> leased.vacuumInterval(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("vacuumInterval must be zero (off) or between 1 s and 1 h");
        }
        assertThat(tx.vacuumInterval(Duration.ZERO)).isSameAs(tx);
        assertThat(leased.vacuumInterval(Duration.ofHours(1))).isSameAs(leased);
    }
}

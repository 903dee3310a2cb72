package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.TransactionalWorker;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A worker logs at WARN, once per holder however many workers see it, what has held the
 * database's MVCC horizon back past its {@code horizonWarnAfter}: here a session idle in a
 * {@code REPEATABLE READ} transaction, named by its pid and application.
 */
class HorizonWarningTest extends DatabaseTest {

    private static List<ILoggingEvent> warningsAbout(ListAppender<ILoggingEvent> events, int pid) {
        synchronized (events.list) {
            return events.list.stream()
                    .filter(e -> e.getLevel() == Level.WARN
                            && e.getFormattedMessage().contains("MVCC horizon")
                            && e.getFormattedMessage().contains("session pid " + pid + " "))
                    .toList();
        }
    }

    @Test
    void aHolderPastTheThresholdIsLoggedOnceByAllTheWorkers() throws Exception {
        Logger leasedLog = (Logger) LoggerFactory.getLogger(JobWorker.class);
        Logger txLog = (Logger) LoggerFactory.getLogger(TransactionalWorker.class);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        leasedLog.addAppender(events);
        txLog.addAppender(events);
        try (Connection held = pool.getConnection()) {
            held.setClientInfo("ApplicationName", "long-report");
            held.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            held.setAutoCommit(false);
            int pid;
            try (Statement s = held.createStatement();
                    ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
                r.next();
                pid = r.getInt(1);
            }
            try (JobWorker leased = JobWorker.builder(pool, "horizon-a", (job, tx) -> {})
                            .horizonWarnAfter(Duration.ofSeconds(1))
                            .listen(false)
                            .build()
                            .start();
                    TransactionalWorker tx = TransactionalWorker.builder(pool, "horizon-b", (jobs, t) -> {})
                            .horizonWarnAfter(Duration.ofSeconds(1))
                            .listen(false)
                            .build()
                            .start()) {
                Await.until(
                        "the warning",
                        Duration.ofSeconds(60),
                        () -> !warningsAbout(events, pid).isEmpty());
                // both workers check every second: give each several more checks
                Thread.sleep(3_000);
            }
            List<ILoggingEvent> warnings = warningsAbout(events, pid);
            assertThat(warnings).hasSize(1);
            assertThat(warnings.get(0).getFormattedMessage())
                    .contains("application long-report", "state idle in transaction", "pg_terminate_backend");
            held.rollback();
        } finally {
            leasedLog.detachAppender(events);
            txLog.detachAppender(events);
        }
    }

    @Test
    void theThresholdIsZeroOrBetweenASecondAndADay() {
        JobWorker.Builder leased = JobWorker.builder(pool, "q", (job, jobTx) -> {});
        for (Duration bad :
                new Duration[] {Duration.ofMillis(999), Duration.ofDays(1).plusSeconds(1), Duration.ofSeconds(-1)}) {
            assertThatThrownBy(() -> leased.horizonWarnAfter(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("horizonWarnAfter must be zero (off) or between 1 s and 1 day");
        }
        assertThat(leased.horizonWarnAfter(Duration.ZERO)).isSameAs(leased);
    }
}

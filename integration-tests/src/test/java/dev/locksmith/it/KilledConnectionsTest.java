package dev.locksmith.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.RetryPolicy;
import dev.locksmith.Transactions;
import dev.locksmith.exception.CommitOutcomeUnknownException;
import dev.locksmith.it.support.DatabaseTest;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/**
 * Transactions while another session terminates their backends at random
 * ({@code pg_terminate_backend}), some of them during {@code COMMIT}: what {@link Transactions}
 * reports must match what the database holds, for every single transaction.
 */
class KilledConnectionsTest extends DatabaseTest {

    /** At least this many transactions run. */
    private static final int TRANSACTIONS = 300;

    /** More run, up to a ceiling, until this many backends were killed: kills are random. */
    private static final int WANTED_KILLS = 10;

    private static final Duration CEILING = Duration.ofSeconds(60);

    @Test
    void everyReportedOutcomeMatchesTheDatabase() throws Exception {
        dsl.execute("CREATE TABLE chaos_ledger (n integer PRIMARY KEY, payload text NOT NULL)");
        HikariConfig config = new HikariConfig();
        // the scratch URL names an application already; the victim's name must win
        config.setJdbcUrl(database.jdbcUrl().replaceAll("([?&])ApplicationName=[^&]*&?", "$1"));
        config.setUsername(database.user());
        config.setPassword(database.password());
        config.setMaximumPoolSize(2);
        config.addDataSourceProperty("ApplicationName", "chaos-victim");
        Set<Integer> reportedCommitted = new HashSet<>();
        Set<Integer> reportedNotCommitted = new HashSet<>();
        Set<Integer> reportedUnknown = new HashSet<>();
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger kills = new AtomicInteger();
        Thread killer = new Thread(
                () -> {
                    // One terminate query after another; each kills a busy victim backend with probability
                    // 3 %, so kills land at random points of the victims' transactions, COMMIT included,
                    // paced by the round trips rather than by sleeping.
                    while (!done.get()) {
                        kills.addAndGet(dsl.fetch("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                        + "WHERE application_name = 'chaos-victim' AND datname = current_database() "
                                        + "AND state <> 'idle' AND random() < 0.03")
                                .size());
                    }
                },
                "chaos-killer");
        try (HikariDataSource victim = new HikariDataSource(config)) {
            DSLContext victimDsl = DSL.using(victim, SQLDialect.POSTGRES);
            Transactions tx = new Transactions(victimDsl, RetryPolicy.noRetry());
            killer.start();
            // On a loaded machine the killer may see few busy victims in 300 transactions; keep going
            // (bounded) until enough kills landed, so the test never passes or fails on luck alone.
            long deadline = System.nanoTime() + CEILING.toNanos();
            for (int n = 1;
                    n <= TRANSACTIONS || (kills.get() < WANTED_KILLS && System.nanoTime() - deadline < 0);
                    n++) {
                int row = n;
                try {
                    tx.run(c -> {
                        // a few statements, so kills land before, during and after COMMIT
                        c.dsl().execute("INSERT INTO chaos_ledger VALUES (?, repeat('x', 2000))", row);
                        c.dsl().execute("UPDATE chaos_ledger SET payload = payload || 'y' WHERE n = ?", row);
                        return null;
                    });
                    reportedCommitted.add(row);
                } catch (CommitOutcomeUnknownException unknown) {
                    reportedUnknown.add(row);
                } catch (RuntimeException failed) {
                    reportedNotCommitted.add(row);
                }
            }
        } finally {
            done.set(true);
            killer.join();
        }
        Set<Integer> inDatabase = new HashSet<>();
        dsl.fetch("SELECT n FROM chaos_ledger").forEach(r -> inDatabase.add(r.get(0, Integer.class)));
        System.out.printf(
                "killed %d backends; %d transactions: %d reported committed, %d not committed, %d unknown%n",
                kills.get(),
                reportedCommitted.size() + reportedNotCommitted.size() + reportedUnknown.size(),
                reportedCommitted.size(),
                reportedNotCommitted.size(),
                reportedUnknown.size());

        assertThat(kills.get()).as("backends were killed").isPositive();
        assertThat(reportedNotCommitted)
                .as("transactions that did go through the kills")
                .isNotEmpty();
        assertThat(inDatabase).as("every reported commit is in the database").containsAll(reportedCommitted);
        assertThat(inDatabase)
                .as("no transaction reported as not committed is in the database")
                .doesNotContainAnyElementsOf(reportedNotCommitted);
    }
}

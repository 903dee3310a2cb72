package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JobQueue#autovacuumProblem()} names what keeps autovacuum from the jobs table: the
 * server's setting (off on this machine's PostgreSQL service, on in the embedded server) or the
 * table's own.
 */
class AutovacuumCheckTest extends DatabaseTest {

    @AfterEach
    void resetTheTable() {
        dsl.execute("ALTER TABLE locksmith.jobs RESET (autovacuum_enabled)");
    }

    private boolean serverAutovacuum() {
        return "on".equals(dsl.fetchValue("SELECT current_setting('autovacuum')"));
    }

    @Test
    void theServersSettingComesFirstThenTheTables() {
        JobQueue queue = new JobQueue(dsl);
        if (serverAutovacuum()) {
            assertThat(queue.autovacuumProblem()).isEmpty();
            // jobs is partitioned: the setting is its partitions'; one of them off is enough
            dsl.execute("ALTER TABLE locksmith.jobs_slot2 SET (autovacuum_enabled = false)");
            assertThat(queue.autovacuumProblem())
                    .hasValueSatisfying(reason -> assertThat(reason)
                            .contains("autovacuum is off for \"locksmith\".\"jobs\"", "autovacuum_enabled = false"));
            dsl.execute("ALTER TABLE locksmith.jobs_slot2 SET (autovacuum_enabled = true)");
            assertThat(queue.autovacuumProblem()).isEmpty();
        } else {
            assertThat(queue.autovacuumProblem())
                    .hasValueSatisfying(reason -> assertThat(reason).contains("autovacuum is off on the server"));
        }
    }
}

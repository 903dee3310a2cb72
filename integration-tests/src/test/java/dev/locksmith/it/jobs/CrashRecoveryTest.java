package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.exception.ConnectionTerminatedException;
import dev.locksmith.internal.Errors;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A worker killed mid-job: the job comes back and is processed once, by someone else. */
class CrashRecoveryTest extends DatabaseTest {

    private JobQueue queue;

    @BeforeEach
    void setUp() {
        dsl.execute("DROP TABLE IF EXISTS crash_results");
        dsl.execute("CREATE TABLE crash_results (job_id bigint NOT NULL, worker text NOT NULL)");
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(dsl);
    }

    @Test
    void transactionalClaimOfAKilledWorkerGoesBackAndIsProcessedOnceByAnother() throws Exception {
        long id = queue.enqueue(dsl, NewJob.of("crash", "k"));

        try (Connection victim = pool.getConnection()) {
            DSLContext doomed = DSL.using(victim, SQLDialect.POSTGRES);
            int pid = doomed.select(DSL.field("pg_backend_pid()", Integer.class))
                    .fetchSingle()
                    .value1();
            victim.setAutoCommit(false);
            List<Job> claimed = queue.claimInTransaction(doomed, "crash", 1);
            assertThat(claimed).extracting(Job::id).containsExactly(id);
            doomed.execute("INSERT INTO crash_results VALUES (?, 'victim')", id);

            // while the victim holds the claim, nobody else can take the job
            List<Job> meanwhile = dsl.transactionResult(c -> queue.claimInTransaction(c.dsl(), "crash", 1));
            assertThat(meanwhile).isEmpty();

            dsl.select(DSL.field("pg_terminate_backend(?)", Boolean.class, pid)).fetch();
            assertThatThrownBy(() -> Errors.translating(() -> {
                        doomed.execute("INSERT INTO crash_results VALUES (?, 'victim-again')", id);
                        return null;
                    }))
                    .isInstanceOf(ConnectionTerminatedException.class);
        }

        List<Job> reclaimed = dsl.transactionResult(c -> {
            List<Job> jobs = queue.claimInTransaction(c.dsl(), "crash", 1);
            jobs.forEach(j -> c.dsl().execute("INSERT INTO crash_results VALUES (?, 'survivor')", j.id()));
            return jobs;
        });
        assertThat(reclaimed).extracting(Job::id).containsExactly(id);
        assertThat(dsl.fetch("SELECT job_id, worker FROM crash_results").map(r -> r.get(1, String.class)))
                .containsExactly("survivor");
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void expiredLeaseIsRescuedCompletedByAnotherAndTheStaleCompletionIsRefused() {
        long id = queue.enqueue(dsl, NewJob.of("crash", "k"));
        Job stale = queue.claim("crash", 1, Duration.ofMillis(200), "crashed-worker")
                .get(0);
        // the crashed worker never heartbeats; nothing can claim the job while the lease runs
        assertThat(queue.claim("crash", 1, Duration.ofMinutes(1), "other")).isEmpty();
        assertThat(queue.rescueExpired()).isZero();

        // wait on the database clock until the lease has expired
        dsl.execute(
                "SELECT pg_sleep(greatest(0, extract(epoch FROM (locked_until - clock_timestamp())) + 0.01)) "
                        + "FROM locksmith.jobs WHERE id = ?",
                id);
        assertThat(queue.rescueExpired()).isEqualTo(1);
        Job rescued = queue.find(dsl, id).orElseThrow();
        assertThat(rescued.status()).isEqualTo(JobStatus.PENDING);
        assertThat(rescued.lastError()).contains("crashed-worker");

        Job fresh = queue.claim("crash", 1, Duration.ofMinutes(1), "survivor").get(0);
        assertThat(fresh.id()).isEqualTo(id);
        assertThat(fresh.attempts()).isEqualTo(2);
        assertThat(queue.complete(dsl, stale)).isFalse(); // the stale worker comes back too late
        assertThat(queue.heartbeat(stale, Duration.ofMinutes(1))).isFalse();
        assertThat(queue.complete(dsl, fresh)).isTrue();
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void leaseExpiringOnTheLastAttemptEndsFailed() {
        long id = queue.enqueue(dsl, NewJob.builder("crash", "k").maxAttempts(1).build());
        queue.claim("crash", 1, Duration.ofMillis(50), "crashed-worker");
        dsl.execute(
                "SELECT pg_sleep(greatest(0, extract(epoch FROM (locked_until - clock_timestamp())) + 0.01)) "
                        + "FROM locksmith.jobs WHERE id = ?",
                id);
        assertThat(queue.rescueExpired()).isEqualTo(1);
        assertThat(queue.find(dsl, id).orElseThrow().status()).isEqualTo(JobStatus.FAILED);
    }
}

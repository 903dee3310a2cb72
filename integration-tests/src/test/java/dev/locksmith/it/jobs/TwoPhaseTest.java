package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.locksmith.Backoff;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.PreparedJob;
import dev.locksmith.jobs.SideEffectCheck;
import dev.locksmith.jobs.SideEffectStatus;
import dev.locksmith.jobs.TwoPhaseJobHandler;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the two-phase tests share: a server that allows prepared transactions (else the class is
 * skipped, with the reason), the handler's table ({@code twophase_results}, written in the claim
 * transaction) and the side-effect ledger ({@code effect_ledger}, one row per side effect
 * performed, written outside the job's transaction as an external system would record it), and,
 * after every test, the check that no prepared transaction was left in this database (anything
 * left is rolled back first, so that one failing test does not block the next one's rows).
 */
abstract class TwoPhaseTest extends DatabaseTest {

    static final JobQueueConfig FAST_RETRY = JobQueueConfig.builder()
            .retryBackoff(new Backoff(Duration.ofMillis(1), Duration.ofMillis(1), 1.0, 0.0))
            .build();

    static final long TIMEOUT_SECONDS = 60;

    /** What a gid handed to ROLLBACK PREPARED here may contain: it cannot be a bind value. */
    private static final Pattern SAFE_GID = Pattern.compile("[A-Za-z0-9_:.-]{1,199}");

    protected JobQueue queue;

    /** Why this server cannot run the class's tests; null when it can. */
    private String skipReason;

    /** The tests hold up to 40 prepared transactions at once. */
    static final int NEEDED_PREPARED_TRANSACTIONS = 50;

    @BeforeAll
    void checkPreparedTransactions() {
        int max = maxPreparedTransactions(dsl);
        skipReason = max >= NEEDED_PREPARED_TRANSACTIONS
                ? null
                : "this server has max_prepared_transactions = " + max
                        + (max == 0 ? " (as CI's PostgreSQL service has)" : "")
                        + ": the two-phase tests need at least " + NEEDED_PREPARED_TRANSACTIONS
                        + (max == 0 ? "; TwoPhaseRequirementTest checks the error the worker gives here" : "");
    }

    @BeforeEach
    void freshTables() {
        assumeTrue(skipReason == null, skipReason);
        dsl.deleteFrom(JOBS).execute();
        dsl.execute("DROP TABLE IF EXISTS twophase_results, effect_ledger");
        dsl.execute("CREATE TABLE twophase_results (job_id bigint NOT NULL)");
        dsl.execute("CREATE TABLE effect_ledger (gid text NOT NULL, job_id bigint NOT NULL)");
        queue = new JobQueue(dsl);
    }

    @AfterEach
    void nothingLeftPrepared() {
        assertThat(rollBackAllPrepared(dsl))
                .as("prepared transactions this test left in its database (rolled back now)")
                .isEmpty();
    }

    static int maxPreparedTransactions(DSLContext dsl) {
        return Integer.parseInt(dsl.fetchValue("SELECT current_setting('max_prepared_transactions')")
                .toString());
    }

    /** Gids prepared in this database, oldest first. */
    static List<String> preparedGids(DSLContext dsl) {
        return dsl.fetch("SELECT gid FROM pg_prepared_xacts WHERE database = current_database() ORDER BY prepared")
                .getValues(0, String.class);
    }

    /** Rolls back every transaction prepared in this database; returns their gids. */
    static List<String> rollBackAllPrepared(DSLContext dsl) {
        List<String> gids = preparedGids(dsl);
        for (String gid : gids) {
            if (!SAFE_GID.matcher(gid).matches()) {
                throw new IllegalStateException("unexpected gid " + gid);
            }
            dsl.execute("ROLLBACK PREPARED {0}", DSL.inline(gid));
        }
        return gids;
    }

    /** The gid the worker gives {@code jobId} in this database's {@code locksmith} schema (the documented format). */
    String gidOf(long jobId) {
        long systemIdentifier =
                ((Number) dsl.fetchValue("SELECT system_identifier FROM pg_control_system()")).longValue();
        long oid = ((Number) dsl.fetchValue("SELECT oid::bigint FROM pg_database WHERE datname = current_database()"))
                .longValue();
        return "locksmith:" + Long.toHexString(systemIdentifier) + ":" + oid + ":locksmith:" + jobId;
    }

    /** Writes the handler's row in the claim transaction; the side effect records itself in the ledger. */
    TwoPhaseJobHandler recording() {
        return new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                tx.execute("INSERT INTO twophase_results VALUES (?)", job.id());
            }

            @Override
            public void performSideEffect(PreparedJob job) {
                recordEffect(job);
            }
        };
    }

    /** The external system performing the side effect: one ledger row, committed at once. */
    void recordEffect(PreparedJob job) {
        dsl.execute(
                "INSERT INTO effect_ledger VALUES (?, ?)", job.gid(), job.job().id());
    }

    /** Asks the ledger, as a real check asks the external system by idempotency key. */
    SideEffectCheck ledgerCheck() {
        return job -> dsl.fetchExists(DSL.selectOne()
                        .from(DSL.table("effect_ledger"))
                        .where(DSL.field("gid", String.class).eq(job.gid())))
                ? SideEffectStatus.HAPPENED
                : SideEffectStatus.NOT_HAPPENED;
    }

    /** Handler rows per job id. */
    Map<Long, Integer> results() {
        return counts("SELECT job_id, count(*)::int FROM twophase_results GROUP BY job_id");
    }

    /** Side effects performed, per job id. */
    Map<Long, Integer> effects() {
        return counts("SELECT job_id, count(*)::int FROM effect_ledger GROUP BY job_id");
    }

    private Map<Long, Integer> counts(String sql) {
        Map<Long, Integer> counts = new TreeMap<>();
        dsl.fetch(sql).forEach(r -> counts.put(r.get(0, Long.class), r.get(1, Integer.class)));
        return counts;
    }

    /**
     * What a worker that died after {@code PREPARE TRANSACTION} leaves: job {@code jobId} claimed
     * (its attempt counted and the job held, committed; then deleted in the transaction), the
     * handler's row written, the transaction prepared under {@code gid}, and the connection gone.
     */
    void prepareByHand(long jobId, String gid) throws SQLException {
        dsl.execute(
                "UPDATE locksmith.jobs SET attempts = attempts + 1, run_at = now() + interval '1 minute' WHERE id = ?",
                jobId);
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            DSLContext tx = DSL.using(c);
            assertThat(tx.execute("DELETE FROM locksmith.jobs WHERE id = ?", jobId))
                    .isEqualTo(1);
            tx.execute("INSERT INTO twophase_results VALUES (?)", jobId);
            tx.execute("PREPARE TRANSACTION {0}", DSL.inline(gid));
            c.setAutoCommit(true);
        }
    }

    /** Ids of the jobs of {@code queueName} a claim would take now (claimed, then rolled back). */
    List<Long> claimableIds(String queueName) {
        List<Long> ids = new java.util.ArrayList<>();
        try {
            dsl.transaction(c -> {
                queue.claimInTransaction(c.dsl(), queueName, 100).forEach(job -> ids.add(job.id()));
                throw new LookedOnly();
            });
        } catch (LookedOnly expected) {
            // rolled back: nothing was claimed
        }
        return ids;
    }

    private static final class LookedOnly extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }

    /** A context like {@link #dsl} whose workers report to {@code observer}. */
    DSLContext observed(LocksmithObserver observer) {
        return Locksmith.builder(dsl).observer(observer).build().dsl();
    }

    /** Counts down on each {@code event}. */
    static LocksmithObserver counting(JobEvent event, CountDownLatch latch) {
        return new LocksmithObserver() {
            @Override
            public void jobEvent(JobEvent e, Job job) {
                if (e == event) {
                    latch.countDown();
                }
            }
        };
    }

    /**
     * Keeps how the worker's first job handling ended ({@code outcome}, counting {@code ended}
     * down; an error counts it down too, with no outcome), and counts {@code completed} down on
     * each completed job.
     */
    static LocksmithObserver firstOutcome(
            AtomicReference<Outcome> outcome, CountDownLatch ended, CountDownLatch completed) {
        return new LocksmithObserver() {
            @Override
            public Observation start(Operation operation) {
                if (!(operation instanceof Operation.HandleJobs)) {
                    return Observation.NONE;
                }
                return new Observation() {
                    @Override
                    public void end(Outcome o) {
                        if (outcome.compareAndSet(null, o)) {
                            ended.countDown();
                        }
                    }

                    @Override
                    public void error(Throwable error) {
                        ended.countDown();
                    }
                };
            }

            @Override
            public void jobEvent(JobEvent event, Job job) {
                if (event == JobEvent.COMPLETED) {
                    completed.countDown();
                }
            }
        };
    }

    static void await(CountDownLatch latch, String what) throws InterruptedException {
        assertThat(latch.await(TIMEOUT_SECONDS, TimeUnit.SECONDS))
                .as("%s within %d s (%d still missing)", what, TIMEOUT_SECONDS, latch.getCount())
                .isTrue();
    }
}

package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWriteBack;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Finished jobs leave the jobs table for job_history in the statement that finishes them, on every
 * finishing path; retry brings them back; retention drops whole day partitions.
 */
class HistoryTest extends DatabaseTest {

    private JobQueue queue;

    @BeforeEach
    void emptyQueueAndHistory() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_HISTORY).execute();
        for (String partition : partitions()) {
            dsl.execute("DROP TABLE locksmith." + DSL.name(partition));
        }
        queue = new JobQueue(dsl, JobQueueConfig.builder().keepCompleted(true).build());
    }

    /** Partitions of job_history other than the default, by name. */
    private List<String> partitions() {
        return dsl
                .fetchValues("SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                        + "WHERE i.inhparent = 'locksmith.job_history'::regclass AND c.relname <> 'job_history_default' "
                        + "ORDER BY 1")
                .stream()
                .map(String::valueOf)
                .toList();
    }

    /** Where job {@code id} is: "jobs:<status>", "history:<status>", several, or none. */
    private List<String> whereIs(long id) {
        return dsl
                .fetchValues(
                        "SELECT 'jobs:' || status FROM locksmith.jobs WHERE id = ? "
                                + "UNION ALL SELECT 'history:' || status FROM locksmith.job_history WHERE id = ?",
                        id,
                        id)
                .stream()
                .map(String::valueOf)
                .toList();
    }

    private Job leased(NewJob job) {
        long id = queue.enqueue(dsl, job);
        Job claimed = queue.claim(job.queue(), 1, Duration.ofMinutes(5), "w").get(0);
        assertThat(claimed.id()).isEqualTo(id);
        return claimed;
    }

    @Test
    void everyFinishingPathMovesTheRowToHistoryInOneStep() throws InterruptedException {
        Job completed = leased(NewJob.of("q", "complete"));
        boolean completedNow = dsl.transactionResult(c -> queue.complete(c.dsl(), completed));
        assertThat(completedNow).isTrue();
        assertThat(whereIs(completed.id())).containsExactly("history:done");

        List<Long> batch = queue.enqueueAll(dsl, List.of(NewJob.of("q", "b"), NewJob.of("q", "b")));
        List<Job> both = queue.claim("q", 2, Duration.ofMinutes(5), "w");
        int bothCompleted = dsl.transactionResult(c -> queue.completeAll(c.dsl(), both));
        assertThat(bothCompleted).isEqualTo(2);
        batch.forEach(id -> assertThat(whereIs(id)).containsExactly("history:done"));

        Job lastAttempt = leased(NewJob.builder("q", "fail").maxAttempts(1).build());
        FailResult failed = dsl.transactionResult(c -> queue.fail(c.dsl(), lastAttempt, "boom"));
        assertThat(failed.outcome()).isEqualTo(FailResult.Outcome.FAILED);
        assertThat(whereIs(lastAttempt.id())).containsExactly("history:failed");
        assertThat(queue.find(dsl, lastAttempt.id()).orElseThrow().lastError()).isEqualTo("boom");

        Job failNow = leased(NewJob.of("q", "fail-now"));
        assertThat(dsl.transactionResult(c -> queue.settle(c.dsl(), failNow, JobControl.failPermanently("no")))
                        .outcome())
                .isEqualTo(FailResult.Outcome.FAILED);
        assertThat(whereIs(failNow.id())).containsExactly("history:failed");

        Job cancelNow = leased(NewJob.of("q", "cancel-control"));
        assertThat(dsl.transactionResult(c -> queue.settle(c.dsl(), cancelNow, JobControl.cancel("stop")))
                        .outcome())
                .isEqualTo(FailResult.Outcome.CANCELLED);
        assertThat(whereIs(cancelNow.id())).containsExactly("history:cancelled");

        long pending = queue.enqueue(dsl, NewJob.of("other", "cancel-pending"));
        assertThat(queue.cancel(dsl, pending)).isTrue();
        assertThat(queue.cancel(dsl, pending)).as("already finished").isFalse();
        assertThat(whereIs(pending)).containsExactly("history:cancelled");

        Job running = leased(NewJob.of("q", "cancel-running"));
        assertThat(queue.cancel(dsl, running.id())).isTrue();
        assertThat(whereIs(running.id())).containsExactly("history:cancelled");
        boolean completedAfterCancel = dsl.transactionResult(c -> queue.complete(c.dsl(), running));
        assertThat(completedAfterCancel).as("the lease went with the cancel").isFalse();

        long lapsing =
                queue.enqueue(dsl, NewJob.builder("lapse", "k").maxAttempts(1).build());
        queue.claim("lapse", 1, Duration.ofMillis(1), "gone");
        Await.until("the lapsed lease is rescued", Duration.ofSeconds(30), () -> queue.rescueExpired() == 1);
        assertThat(whereIs(lapsing)).containsExactly("history:failed");
        assertThat(queue.find(dsl, lapsing).orElseThrow().lastError()).isEqualTo("lease of gone expired");

        assertThat(dsl.fetchCount(JOBS)).as("no finished row lingers in jobs").isZero();
        assertThat(queue.find(dsl, completed.id()).orElseThrow().status()).isEqualTo(JobStatus.DONE);
    }

    @Test
    void transactionalClaimRecordsItsFailuresInHistory() {
        long id = queue.enqueue(dsl, NewJob.builder("tx", "k").maxAttempts(1).build());
        // A handler's failure in transactional mode is written back in the claiming transaction;
        // on the last attempt, straight into the history.
        dsl.transaction(c -> {
            Job job = queue.claimInTransaction(c.dsl(), "tx", 1).get(0);
            assertThat(job.id()).isEqualTo(id);
            assertThat(TransactionalWriteBack.fail(queue, c.dsl(), job, "broken")
                            .outcome())
                    .isEqualTo(FailResult.Outcome.FAILED);
        });
        assertThat(whereIs(id)).containsExactly("history:failed");
    }

    @Test
    void retryMovesAFailedJobBackWithItsIdAndOnlyOnce() {
        Job job = leased(NewJob.builder("r", "k").maxAttempts(1).build());
        dsl.transaction(c -> queue.fail(c.dsl(), job, "first"));
        assertThat(whereIs(job.id())).containsExactly("history:failed");

        assertThat(queue.retry(dsl, job.id())).isTrue();
        assertThat(queue.retry(dsl, job.id())).as("already back").isFalse();
        assertThat(whereIs(job.id())).containsExactly("jobs:pending");
        Job again = queue.claim("r", 1, Duration.ofMinutes(1), "w").get(0);
        assertThat(again.id()).isEqualTo(job.id());
        assertThat(again.attempts()).isEqualTo(2);
        assertThat(again.lastError()).isEqualTo("first");
        dsl.transaction(c -> queue.complete(c.dsl(), again));
        assertThat(whereIs(job.id())).containsExactly("history:done");
        assertThat(queue.retry(dsl, job.id())).as("a done job is not retried").isFalse();

        assertThat(queue.deleteFinished(dsl, job.id())).isTrue();
        assertThat(whereIs(job.id())).isEmpty();
    }

    @Test
    void retryOfAJobWhoseUniqueKeyIsTakenAgainFailsAndKeepsItInHistory() {
        Job job =
                leased(NewJob.builder("u", "k").uniqueKey("one").maxAttempts(1).build());
        dsl.transaction(c -> queue.fail(c.dsl(), job, "x"));
        long live = queue.enqueue(dsl, NewJob.builder("u", "k").uniqueKey("one").build());
        assertThat(live).isNotEqualTo(job.id());
        assertThatThrownBy(() -> queue.retry(dsl, job.id()))
                .isInstanceOf(dev.locksmith.exception.UniqueViolationException.class);
        assertThat(whereIs(job.id())).containsExactly("history:failed");
    }

    @Test
    void partitionsAreMadeAheadAndTakeOverTheDefaultPartitionsRowsOfTheirDay() {
        Job early = leased(NewJob.of("p", "k"));
        dsl.transaction(c -> queue.complete(c.dsl(), early));
        assertThat(dsl.fetchValue(
                        "SELECT tableoid::regclass::text FROM locksmith.job_history WHERE id = ?", early.id()))
                .as("no partition for today yet: the default partition takes it")
                .isEqualTo("locksmith.job_history_default");

        assertThat(queue.prepareHistory(2)).isEqualTo(3);
        assertThat(queue.prepareHistory(2)).as("nothing left to make").isZero();
        LocalDate today = dsl.fetchValue(DSL.field("(now() AT TIME ZONE 'UTC')::date", LocalDate.class));
        assertThat(partitions())
                .containsExactly(
                        "job_history_p" + today.toString().replace("-", ""),
                        "job_history_p" + today.plusDays(1).toString().replace("-", ""),
                        "job_history_p" + today.plusDays(2).toString().replace("-", ""));
        assertThat(dsl.fetchValue(
                        "SELECT tableoid::regclass::text FROM locksmith.job_history WHERE id = ?", early.id()))
                .isEqualTo("locksmith.job_history_p" + today.toString().replace("-", ""));

        Job later = leased(NewJob.of("p", "k"));
        dsl.transaction(c -> queue.complete(c.dsl(), later));
        assertThat(dsl.fetchValue(
                        "SELECT tableoid::regclass::text FROM locksmith.job_history WHERE id = ?", later.id()))
                .isEqualTo("locksmith.job_history_p" + today.toString().replace("-", ""));
        assertThat(queue.historySize().partitions()).isEqualTo(4);
    }

    @Test
    void retentionDropsWholeOldPartitionsAndDeletesWithinTheBoundary() {
        queue.prepareHistory(1);
        // Two old days, with rows, as the workers would have made them.
        LocalDate old = LocalDate.now(ZoneOffset.UTC).minusDays(30);
        for (LocalDate day : List.of(old, old.plusDays(1))) {
            String name = "job_history_p" + day.toString().replace("-", "");
            dsl.execute(
                    "CREATE TABLE locksmith." + DSL.name(name) + " PARTITION OF locksmith.job_history "
                            + "FOR VALUES FROM (?::timestamptz) TO (?::timestamptz)",
                    day + " 00:00:00+00",
                    day.plusDays(1) + " 00:00:00+00");
            dsl.execute(
                    "INSERT INTO locksmith.job_history (id, queue, kind, run_at, status, finished_at) "
                            + "SELECT -i, 'old', 'k', now(), 'done', ?::timestamptz + i * interval '1 second' "
                            + "FROM generate_series(1, 500) i",
                    day + " 06:00:00+00");
        }
        // A row of an old day in the default partition (finished while no partition was made).
        dsl.execute("INSERT INTO locksmith.job_history (id, queue, kind, run_at, status, finished_at) "
                + "VALUES (-100000, 'old', 'k', now(), 'failed', now() - interval '40 days')");
        Job recent = leased(NewJob.of("q", "k"));
        dsl.transaction(c -> queue.complete(c.dsl(), recent));
        dsl.execute("ANALYZE locksmith.job_history");

        int expired = queue.deleteFinishedOlderThan(Duration.ofDays(7), 100);

        assertThat(expired)
                .as("two dropped partitions by the statistics, one row by statement")
                .isEqualTo(1001);
        assertThat(partitions()).noneMatch(p -> p.contains(old.toString().replace("-", "")));
        assertThat(dsl.fetchCount(JOB_HISTORY)).isEqualTo(1);
        assertThat(whereIs(recent.id())).containsExactly("history:done");

        assertThat(queue.deleteFinishedOlderThan(Duration.ZERO, 100))
                .as("today's partition is not whole days old: its rows are deleted one by one")
                .isEqualTo(1);
        assertThat(partitions()).hasSize(2);
        assertThatThrownBy(() -> queue.prepareHistory(32)).hasMessageContaining("daysAhead");
    }
}

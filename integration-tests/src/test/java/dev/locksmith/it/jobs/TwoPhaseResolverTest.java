package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.PreparedJob;
import dev.locksmith.jobs.ResolveResult;
import dev.locksmith.jobs.SideEffectCheck;
import dev.locksmith.jobs.SideEffectStatus;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.observe.JobEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The resolver, on transactions left prepared as a worker that died after PREPARE leaves them
 * (the claim's delete and the handler's row, prepared under the job's gid, no session): it
 * commits when the check says the side effect happened, rolls back (the job claimable again,
 * the attempt counted) when it did not, asks again later when it cannot tell; it leaves
 * transactions younger than its threshold and every one it did not create; several at once
 * settle each transaction once.
 */
class TwoPhaseResolverTest extends TwoPhaseTest {

    private TwoPhaseWorker resolver(String queueName, SideEffectCheck check) {
        return TwoPhaseWorker.builder(new JobQueue(Locksmith.of(pool), FAST_RETRY), queueName, recording(), check)
                .resolveOlderThan(Duration.ZERO)
                .build();
    }

    private long preparedJob(String queueName) throws Exception {
        return preparedJob(queueName, Duration.ZERO);
    }

    /** A job prepared by hand; {@code delay} keeps a running worker from claiming it first. */
    private long preparedJob(String queueName, Duration delay) throws Exception {
        long id = queue.enqueue(
                dsl,
                NewJob.builder(queueName, "charge").maxAttempts(3).delay(delay).build());
        prepareByHand(id, gidOf(id));
        return id;
    }

    @Test
    void whenTheSideEffectHappenedItCommitsTheJobsWritesAndRemoval() throws Exception {
        long id = preparedJob("pay");
        dsl.execute("INSERT INTO effect_ledger VALUES (?, ?)", gidOf(id), id);
        List<PreparedJob> asked = new CopyOnWriteArrayList<>();
        SideEffectCheck check = job -> {
            asked.add(job);
            return ledgerCheck().check(job);
        };

        assertThat(resolver("pay", check).resolveNow()).isEqualTo(new ResolveResult(1, 0, 0));

        assertThat(asked).singleElement().satisfies(job -> {
            assertThat(job.gid()).isEqualTo(gidOf(id));
            assertThat(job.job().id()).isEqualTo(id);
            assertThat(job.job().kind()).isEqualTo("charge");
            assertThat(job.job().status()).as("the row as it was claimed").isEqualTo(JobStatus.PENDING);
        });
        assertThat(queue.find(dsl, id)).isEmpty();
        assertThat(results()).containsExactly(entry(id, 1));
        assertThat(effects()).containsExactly(entry(id, 1));
    }

    @Test
    void whenItDidNotHappenItRollsBackAndTheJobIsClaimableAgainWithTheAttemptCounted() throws Exception {
        long id = preparedJob("pay");

        assertThat(resolver("pay", ledgerCheck()).resolveNow()).isEqualTo(new ResolveResult(0, 1, 0));

        assertThat(results()).as("the handler's writes were rolled back").isEmpty();
        Job back = queue.find(dsl, id).orElseThrow();
        assertThat(back.status()).isEqualTo(JobStatus.PENDING);
        assertThat(back.attempts()).isEqualTo(1);
        assertThat(back.lastError()).contains("NOT_HAPPENED", gidOf(id), "rolled back by the resolver");
        assertThat(claimableIds("pay")).containsExactly(id);
    }

    @Test
    void unknownLeavesTheJobPreparedAndLockedUntilAnotherRoundCanTell() throws Exception {
        long id = preparedJob("pay");
        AtomicInteger asked = new AtomicInteger();
        SideEffectCheck unsureThenSure = job -> switch (asked.incrementAndGet()) {
            case 1 -> SideEffectStatus.UNKNOWN;
            case 2 -> throw new java.io.IOException("provider timed out");
            default -> SideEffectStatus.HAPPENED;
        };
        TwoPhaseWorker resolver = resolver("pay", unsureThenSure);

        assertThat(resolver.resolveNow()).isEqualTo(new ResolveResult(0, 0, 1));
        assertThat(resolver.resolveNow()).as("a check that throws is UNKNOWN").isEqualTo(new ResolveResult(0, 0, 1));
        assertThat(preparedGids(dsl)).containsExactly(gidOf(id));
        assertThat(claimableIds("pay")).as("still locked").isEmpty();

        assertThat(resolver.resolveNow()).isEqualTo(new ResolveResult(1, 0, 0));
        assertThat(queue.find(dsl, id)).isEmpty();
        assertThat(results()).containsExactly(entry(id, 1));
    }

    @Test
    void transactionsYoungerThanTheThresholdAreLeftAlone() throws Exception {
        long id = preparedJob("pay");
        AtomicInteger asked = new AtomicInteger();
        TwoPhaseWorker patient = TwoPhaseWorker.builder(pool, "pay", recording(), job -> {
                    asked.incrementAndGet();
                    return SideEffectStatus.HAPPENED;
                })
                .resolveOlderThan(Duration.ofHours(1))
                .build();

        assertThat(patient.resolveNow()).isEqualTo(new ResolveResult(0, 0, 0));
        assertThat(asked).hasValue(0);
        assertThat(preparedGids(dsl)).containsExactly(gidOf(id));
        rollBackAllPrepared(dsl);
    }

    @Test
    void itNeverTouchesPreparedTransactionsItDidNotCreate() throws Exception {
        long otherQueue = preparedJob("elsewhere");
        long ours = queue.enqueue(dsl, NewJob.of("pay", "charge"));
        String otherSchema = gidOf(ours).replace(":locksmith:", ":other_schema:");
        String otherDatabase = gidOf(ours).replaceFirst(":[0-9]+:locksmith:", ":1:locksmith:");
        List<String> foreign = List.of("billing-app:invoice-7", otherSchema, otherDatabase);
        for (String gid : foreign) {
            try (var c = pool.getConnection()) {
                c.setAutoCommit(false);
                org.jooq.impl.DSL.using(c).execute("PREPARE TRANSACTION {0}", org.jooq.impl.DSL.inline(gid));
                c.setAutoCommit(true);
            }
        }
        AtomicInteger asked = new AtomicInteger();

        ResolveResult result = resolver("pay", job -> {
                    asked.incrementAndGet();
                    return SideEffectStatus.HAPPENED;
                })
                .resolveNow();

        assertThat(result).isEqualTo(new ResolveResult(0, 0, 0));
        assertThat(asked).as("the check is asked about none of them").hasValue(0);
        assertThat(preparedGids(dsl))
                .containsExactlyInAnyOrder(gidOf(otherQueue), otherSchema, otherDatabase, foreign.get(0));
        assertThat(rollBackAllPrepared(dsl)).hasSize(4);
    }

    @Test
    void severalResolversAtOnceSettleEachTransactionOnce() throws Exception {
        int jobs = 40;
        int resolvers = 4;
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            long id = preparedJob("pay");
            ids.add(id);
            if (i % 2 == 0) {
                dsl.execute("INSERT INTO effect_ledger VALUES (?, ?)", gidOf(id), id);
            }
        }
        CyclicBarrier start = new CyclicBarrier(resolvers);
        ExecutorService threads = Executors.newFixedThreadPool(resolvers);
        List<ResolveResult> results = new ArrayList<>();
        try {
            List<Future<ResolveResult>> rounds = new ArrayList<>();
            for (int r = 0; r < resolvers; r++) {
                TwoPhaseWorker resolver = resolver("pay", ledgerCheck());
                rounds.add(threads.submit(() -> {
                    start.await(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    return resolver.resolveNow();
                }));
            }
            for (Future<ResolveResult> round : rounds) {
                results.add(round.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
            }
        } finally {
            threads.shutdownNow();
        }
        System.out.printf("%d resolvers at once over %d prepared jobs: %s%n", resolvers, jobs, results);
        assertThat(results.stream().mapToInt(ResolveResult::committed).sum()).isEqualTo(jobs / 2);
        assertThat(results.stream().mapToInt(ResolveResult::rolledBack).sum()).isEqualTo(jobs / 2);
        assertThat(preparedGids(dsl)).isEmpty();
        Map<Long, Integer> committedOnce = ids.stream()
                .filter(id -> ids.indexOf(id) % 2 == 0)
                .collect(Collectors.toMap(Function.identity(), id -> 1));
        assertThat(results()).isEqualTo(committedOnce);
        assertThat(queue.stats())
                .singleElement()
                .satisfies(stats -> assertThat(stats.count(JobStatus.PENDING)).isEqualTo(jobs / 2));
        assertThat(dsl.fetchValue("SELECT max(attempts) FROM locksmith.jobs"))
                .as("each rolled-back attempt counted once")
                .isEqualTo(1);
    }

    @Test
    void startSettlesWhatAPredecessorLeftBeforeClaimingAndThenRunsTheRest() throws Exception {
        long happened = preparedJob("pay");
        dsl.execute("INSERT INTO effect_ledger VALUES (?, ?)", gidOf(happened), happened);
        long notHappened = preparedJob("pay");
        // one completion by the round of start() (the committed job), one by the rerun of the other
        CountDownLatch completed = new CountDownLatch(2);
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        new JobQueue(observed(counting(JobEvent.COMPLETED, completed)), FAST_RETRY),
                        "pay",
                        recording(),
                        ledgerCheck())
                .resolveOlderThan(Duration.ZERO)
                .pollInterval(Duration.ofMillis(50))
                .threads(1)
                .build()
                .start()) {
            assertThat(preparedGids(dsl))
                    .as("settled before start() returned (the other one may be prepared again by now)")
                    .doesNotContain(gidOf(happened));
            await(completed, "the committed job, and the rolled-back one run again");
        }
        assertThat(preparedGids(dsl)).isEmpty();
        assertThat(results()).containsExactly(entry(happened, 1), entry(notHappened, 1));
        assertThat(effects()).containsExactly(entry(happened, 1), entry(notHappened, 1));
    }

    @Test
    void theResolverThreadSettlesItsQueuesTransactionsOnceTheyAreOldEnough() throws Exception {
        CountDownLatch committed = new CountDownLatch(3);
        List<PreparedJob> askedByOtherQueue = new CopyOnWriteArrayList<>();
        List<Long> ids = new ArrayList<>();
        try (TwoPhaseWorker otherQueue = TwoPhaseWorker.builder(pool, "other-queue", recording(), job -> {
                            askedByOtherQueue.add(job);
                            return SideEffectStatus.HAPPENED;
                        })
                        .resolveOlderThan(Duration.ZERO)
                        .resolveInterval(Duration.ofMillis(50))
                        .build()
                        .start();
                TwoPhaseWorker worker = TwoPhaseWorker.builder(
                                observed(counting(JobEvent.COMPLETED, committed)), "pay", recording(), ledgerCheck())
                        .resolveOlderThan(Duration.ofMillis(300))
                        .resolveInterval(Duration.ofMillis(100))
                        .build()
                        .start()) {
            for (int i = 0; i < 3; i++) {
                long id = preparedJob("pay", Duration.ofHours(1));
                dsl.execute("INSERT INTO effect_ledger VALUES (?, ?)", gidOf(id), id);
                ids.add(id);
            }
            await(committed, "the resolver thread committed the three jobs");
        }
        assertThat(askedByOtherQueue)
                .as("another queue's resolver never asks about this queue's jobs")
                .isEmpty();
        assertThat(preparedGids(dsl)).isEmpty();
        assertThat(results()).isEqualTo(ids.stream().collect(Collectors.toMap(Function.identity(), id -> 1)));
    }
}

package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Backends;
import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.PreparedJob;
import dev.locksmith.jobs.ResolveResult;
import dev.locksmith.jobs.TwoPhaseJobHandler;
import dev.locksmith.jobs.TwoPhaseSeams;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.LocksmithObserver;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/**
 * Several workers (each with threads and a pool of its own) over many jobs, while side effects
 * fail at random (rolled back, counted and retried) and connections are killed at random just
 * before {@code COMMIT PREPARED} or {@code ROLLBACK PREPARED} (leaving the job prepared). Once
 * every job is committed or stuck, the workers stop, a resolver settles the stuck ones by the
 * ledger, and the ones it rolled back run again. Every job's side effect is then in the ledger
 * exactly once, and its handler's row too.
 */
class TwoPhaseConcurrencyTest extends TwoPhaseTest {

    private static final int JOBS = 400;
    private static final int WORKERS = 3;
    private static final int THREADS = 3;
    private static final double EFFECT_FAILS = 0.10;
    private static final double CONNECTION_KILLED = 0.05;

    @Test
    void everySideEffectHappensOnceThroughFailuresAndKilledConnections() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        List<Long> ids = queue.enqueueAll(
                dsl,
                Collections.nCopies(
                        JOBS, NewJob.builder("pay", "charge").maxAttempts(1000).build()));
        AtomicInteger failedEffects = new AtomicInteger();
        AtomicInteger killedBeforeCommit = new AtomicInteger();
        AtomicInteger killedBeforeRollback = new AtomicInteger();
        // each job ends this phase once: committed, or left prepared by a killed connection
        CountDownLatch committedOrStuck = new CountDownLatch(JOBS);
        TwoPhaseJobHandler flaky = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                tx.execute("INSERT INTO twophase_results VALUES (?)", job.id());
            }

            @Override
            public void performSideEffect(PreparedJob job) throws IOException {
                if (chance(random, EFFECT_FAILS)) {
                    failedEffects.incrementAndGet();
                    throw new IOException("provider unavailable");
                }
                recordEffect(job);
            }
        };
        TwoPhaseSeams.BeforeFinish killAtRandom = (job, commit, pid) -> {
            if (chance(random, CONNECTION_KILLED)) {
                Backends.terminate(dsl, pid);
                (commit ? killedBeforeCommit : killedBeforeRollback).incrementAndGet();
                committedOrStuck.countDown();
            }
        };
        AtomicInteger recordedFailures = new AtomicInteger();
        LocksmithObserver completions = new LocksmithObserver() {
            @Override
            public void jobEvent(JobEvent event, Job job) {
                if (event == JobEvent.COMPLETED) {
                    committedOrStuck.countDown();
                } else if (event == JobEvent.RETRY_SCHEDULED) {
                    recordedFailures.incrementAndGet();
                }
            }
        };
        List<HikariDataSource> pools = new ArrayList<>();
        List<TwoPhaseWorker> workers = new ArrayList<>();
        try {
            for (int w = 0; w < WORKERS; w++) {
                HikariDataSource own = TestPostgres.pool(database, THREADS + 1);
                pools.add(own);
                DSLContext observed = Locksmith.builder(DSL.using(own, SQLDialect.POSTGRES))
                        .observer(completions)
                        .build()
                        .dsl();
                workers.add(TwoPhaseSeams.beforeFinish(
                                TwoPhaseWorker.builder(new JobQueue(observed, FAST_RETRY), "pay", flaky, ledgerCheck())
                                        .threads(THREADS)
                                        .listen(false)
                                        .pollInterval(Duration.ofMillis(20))
                                        // settled at the end, once no worker runs
                                        .resolveOlderThan(Duration.ofHours(1)),
                                killAtRandom)
                        .build()
                        .start());
            }
            await(committedOrStuck, "every job committed or left prepared");
        } finally {
            workers.forEach(TwoPhaseWorker::close);
            pools.forEach(HikariDataSource::close);
        }
        int stuck = killedBeforeCommit.get() + killedBeforeRollback.get();
        assertThat(preparedGids(dsl)).hasSize(stuck);

        ResolveResult resolved = TwoPhaseWorker.builder(
                        new JobQueue(Locksmith.of(pool), FAST_RETRY), "pay", flaky, ledgerCheck())
                .resolveOlderThan(Duration.ZERO)
                .build()
                .resolveNow();
        assertThat(resolved).isEqualTo(new ResolveResult(killedBeforeCommit.get(), killedBeforeRollback.get(), 0));

        CountDownLatch rerun = new CountDownLatch(resolved.rolledBack());
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        observed(counting(JobEvent.COMPLETED, rerun)), "pay", recording(), ledgerCheck())
                .threads(THREADS)
                .listen(false)
                .pollInterval(Duration.ofMillis(20))
                .build()
                .start()) {
            await(rerun, "the rolled-back jobs ran again");
        }

        System.out.printf(
                "two-phase: %d jobs, %d workers x %d threads (seed %d): %d side effects failed, %d connections killed "
                        + "before COMMIT PREPARED and %d before ROLLBACK PREPARED; resolver %s%n",
                JOBS,
                WORKERS,
                THREADS,
                seed,
                failedEffects.get(),
                killedBeforeCommit.get(),
                killedBeforeRollback.get(),
                resolved);
        assertThat(recordedFailures)
                .as("every failed side effect whose ROLLBACK PREPARED went through was recorded, with its backoff "
                        + "(the others by the resolver); none lost to a claimer")
                .hasValue(failedEffects.get() - killedBeforeRollback.get());
        Map<Long, Integer> once = ids.stream().collect(Collectors.toMap(Function.identity(), id -> 1));
        assertThat(effects()).as("side effects per job (seed %d)", seed).isEqualTo(once);
        assertThat(results()).as("handler rows per job (seed %d)", seed).isEqualTo(once);
        assertThat(queue.stats()).as("no job left").isEmpty();
    }

    private static boolean chance(Random random, double p) {
        synchronized (random) {
            return random.nextDouble() < p;
        }
    }
}

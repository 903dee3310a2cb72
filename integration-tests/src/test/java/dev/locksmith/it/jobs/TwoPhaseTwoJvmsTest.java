package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.ResolveResult;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.observe.JobEvent;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A worker in a second JVM ({@link TwoPhaseWorkerProcess}, started with this test's class path) is
 * killed ({@code Process.destroyForcibly()}) inside its side effect, after PREPARE TRANSACTION:
 * with the side effect already in the ledger, and before it happened. The prepared transaction
 * outlives the JVM and keeps the job locked; the resolver here commits it in the first case, and
 * rolls it back in the second, after which the job runs again. Either way the job is done once:
 * one handler row, one ledger entry.
 */
class TwoPhaseTwoJvmsTest extends TwoPhaseTest {

    @ParameterizedTest(name = "side effect recorded before the kill: {0}")
    @ValueSource(booleans = {true, false})
    void aWorkerJvmKilledInsideItsSideEffectIsSettledByTheResolver(boolean effectHappened) throws Exception {
        long id = queue.enqueue(
                dsl, NewJob.builder("pay", "charge").maxAttempts(3).build());
        Process second = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        TwoPhaseWorkerProcess.class.getName(),
                        database.jdbcUrl(),
                        database.user(),
                        database.password() == null ? "" : database.password(),
                        "pay",
                        effectHappened
                                ? TwoPhaseWorkerProcess.EFFECT_THEN_HANG
                                : TwoPhaseWorkerProcess.HANG_BEFORE_EFFECT)
                .redirectErrorStream(true)
                .start();
        try {
            assertThat(awaitSideEffect(second)).isEqualTo(gidOf(id));
        } finally {
            second.destroyForcibly();
            assertThat(second.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS))
                    .as("second JVM gone")
                    .isTrue();
        }

        assertThat(preparedGids(dsl)).as("prepared after its JVM died").containsExactly(gidOf(id));
        assertThat(claimableIds("pay")).as("the job stays locked").isEmpty();
        assertThat(queue.find(dsl, id)).get().extracting(Job::status).isEqualTo(JobStatus.PENDING);
        assertThat(results()).isEmpty();

        ResolveResult resolved = TwoPhaseWorker.builder(
                        new JobQueue(Locksmith.of(pool), FAST_RETRY), "pay", recording(), ledgerCheck())
                .resolveOlderThan(Duration.ZERO)
                .build()
                .resolveNow();

        if (effectHappened) {
            assertThat(resolved).isEqualTo(new ResolveResult(1, 0, 0));
        } else {
            assertThat(resolved).isEqualTo(new ResolveResult(0, 1, 0));
            assertThat(results()).isEmpty();
            assertThat(claimableIds("pay")).as("claimable again").containsExactly(id);
            CountDownLatch committed = new CountDownLatch(1);
            try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                            observed(counting(JobEvent.COMPLETED, committed)), "pay", recording(), ledgerCheck())
                    .threads(1)
                    .listen(false)
                    .pollInterval(Duration.ofMillis(50))
                    .build()
                    .start()) {
                await(committed, "the job ran again here");
            }
        }
        assertThat(queue.find(dsl, id)).isEmpty();
        assertThat(results()).containsExactly(entry(id, 1));
        assertThat(effects()).containsExactly(entry(id, 1));
    }

    /** Reads the second JVM's output until it says it is inside the side effect; returns the gid. */
    private static String awaitSideEffect(Process second) throws Exception {
        StringBuilder output = new StringBuilder();
        CompletableFuture<String> gid = CompletableFuture.supplyAsync(() -> {
            try (BufferedReader lines =
                    new BufferedReader(new InputStreamReader(second.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    synchronized (output) {
                        output.append(line).append('\n');
                    }
                    if (line.startsWith(TwoPhaseWorkerProcess.MARKER)) {
                        return line.substring(TwoPhaseWorkerProcess.MARKER.length());
                    }
                }
                throw new IllegalStateException("the second JVM ended before its side effect");
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        try {
            return gid.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            synchronized (output) {
                throw new AssertionError(
                        "the second JVM did not reach its side effect within " + TIMEOUT_SECONDS + " s; its output:\n"
                                + output,
                        e);
            }
        }
    }
}

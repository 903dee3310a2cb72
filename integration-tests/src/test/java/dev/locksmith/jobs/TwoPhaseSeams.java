package dev.locksmith.jobs;

import dev.locksmith.jobs.runtime.TwoPhaseMode;
import java.time.Duration;

/**
 * Reaches {@link TwoPhaseWorker}'s package-private test seam from the tests of other packages:
 * a hook between the steps of a job, on the worker's thread. Not API: it lives in the test
 * sources, in the worker's package.
 */
public final class TwoPhaseSeams {

    private TwoPhaseSeams() {}

    /** Called just before {@code COMMIT PREPARED} or {@code ROLLBACK PREPARED}. */
    @FunctionalInterface
    public interface BeforeFinish {
        /**
         * @param job the prepared job
         * @param commit true before {@code COMMIT PREPARED}, false before {@code ROLLBACK PREPARED}
         * @param backendPid the server process of the connection about to send it
         */
        void run(PreparedJob job, boolean commit, int backendPid) throws Exception;
    }

    /** Called after {@code PREPARE TRANSACTION}, before the side effect. */
    @FunctionalInterface
    public interface AfterPrepare {
        /**
         * @param job the prepared job
         * @param backendPid the server process of the connection that prepared it
         */
        void run(PreparedJob job, int backendPid) throws Exception;
    }

    /** Called after the claim, before the transaction to be prepared takes the job. */
    @FunctionalInterface
    public interface BeforeTake {
        /** @param job the job as the claim returned it */
        void run(Job job) throws Exception;
    }

    /** {@code builder}, with {@code hook} run before each job is taken in its transaction. */
    public static TwoPhaseWorker.Builder beforeTake(TwoPhaseWorker.Builder builder, BeforeTake hook) {
        return builder.seam(new TwoPhaseMode.Seam() {
            @Override
            public void beforeTake(Job job) {
                unchecked(() -> hook.run(job));
            }
        });
    }

    /** {@code builder}, with {@code hook} run before each job's COMMIT or ROLLBACK PREPARED. */
    public static TwoPhaseWorker.Builder beforeFinish(TwoPhaseWorker.Builder builder, BeforeFinish hook) {
        return builder.seam(new TwoPhaseMode.Seam() {
            @Override
            public void beforeFinish(PreparedJob job, boolean commit, int backendPid) {
                unchecked(() -> hook.run(job, commit, backendPid));
            }
        });
    }

    /** {@code builder}, with {@code hook} run after each job's PREPARE TRANSACTION. */
    public static TwoPhaseWorker.Builder afterPrepare(TwoPhaseWorker.Builder builder, AfterPrepare hook) {
        return builder.seam(new TwoPhaseMode.Seam() {
            @Override
            public void afterPrepare(PreparedJob job, int backendPid) {
                unchecked(() -> hook.run(job, backendPid));
            }
        });
    }

    /**
     * {@code builder}, with every claim held for {@code hold} instead of the worker's (at least a
     * minute), and {@code hook} run after each job's PREPARE TRANSACTION.
     */
    public static TwoPhaseWorker.Builder holdingFor(TwoPhaseWorker.Builder builder, Duration hold, AfterPrepare hook) {
        return builder.seam(new TwoPhaseMode.Seam() {
            @Override
            public Duration hold(Duration workers) {
                return hold;
            }

            @Override
            public void afterPrepare(PreparedJob job, int backendPid) {
                unchecked(() -> hook.run(job, backendPid));
            }
        });
    }

    private interface Body {
        void run() throws Exception;
    }

    private static void unchecked(Body body) {
        try {
            body.run();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}

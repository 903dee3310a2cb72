package dev.locksmith.it.jobs;

import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.PreparedJob;
import dev.locksmith.jobs.SideEffectStatus;
import dev.locksmith.jobs.TwoPhaseJobHandler;
import dev.locksmith.jobs.TwoPhaseWorker;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A two-phase worker in a JVM of its own, for {@link TwoPhaseTwoJvmsTest}: it claims a job, writes
 * the handler's row, prepares, and inside the side effect records it in the ledger (or not),
 * prints {@value #MARKER} and the gid, and waits there until the test kills the JVM.
 */
public final class TwoPhaseWorkerProcess {

    /** Printed, followed by the gid, once the side effect is reached. */
    static final String MARKER = "IN-SIDE-EFFECT ";

    /** The side effect is recorded in the ledger before the JVM waits to be killed. */
    static final String EFFECT_THEN_HANG = "effect-then-hang";

    /** The JVM waits to be killed before the side effect happened. */
    static final String HANG_BEFORE_EFFECT = "hang-before-effect";

    private TwoPhaseWorkerProcess() {}

    /**
     * Runs the worker until killed.
     *
     * @param args JDBC URL, user, password (empty for none), queue, {@link #EFFECT_THEN_HANG} or
     *     {@link #HANG_BEFORE_EFFECT}
     * @throws Exception when the worker cannot start
     */
    public static void main(String[] args) throws Exception {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(args[0]);
        dataSource.setUser(args[1]);
        if (!args[2].isEmpty()) {
            dataSource.setPassword(args[2]);
        }
        boolean effectFirst = EFFECT_THEN_HANG.equals(args[4]);
        DSLContext ledger = DSL.using(dataSource, SQLDialect.POSTGRES);
        CountDownLatch never = new CountDownLatch(1);
        TwoPhaseJobHandler handler = new TwoPhaseJobHandler() {
            @Override
            public void handleInTransaction(Job job, DSLContext tx) {
                tx.execute("INSERT INTO twophase_results VALUES (?)", job.id());
            }

            @Override
            public void performSideEffect(PreparedJob job) throws InterruptedException {
                if (effectFirst) {
                    ledger.execute(
                            "INSERT INTO effect_ledger VALUES (?, ?)",
                            job.gid(),
                            job.job().id());
                }
                System.out.println(MARKER + job.gid());
                System.out.flush();
                never.await();
            }
        };
        TwoPhaseWorker.builder(dataSource, args[3], handler, job -> SideEffectStatus.UNKNOWN)
                .threads(1)
                .listen(false)
                .pollInterval(Duration.ofMillis(50))
                .resolveOlderThan(Duration.ofHours(1))
                .build()
                .start();
        never.await();
    }
}

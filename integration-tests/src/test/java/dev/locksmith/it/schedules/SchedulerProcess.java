package dev.locksmith.it.schedules;

import dev.locksmith.schedules.Schedules;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.OffsetDateTime;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jooq.DSLContext;
import org.jooq.Record3;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * A scheduler on simulated time shared through the database: it ticks once at each step the
 * test publishes in {@code sim_clock} (step, simulated time, done), and reports each tick in
 * {@code sim_progress} (its name, the last step it ticked, the jobs it enqueued). Run in the test's
 * JVM on threads, and as {@link #main} in a second JVM.
 */
public final class SchedulerProcess {

    private SchedulerProcess() {}

    /**
     * Ticks until the test says it is done.
     *
     * @param args JDBC URL, user, password (empty for none), this scheduler's name
     * @throws Exception when it cannot connect, or a tick fails
     */
    public static void main(String[] args) throws Exception {
        try (Connection connection =
                DriverManager.getConnection(args[0], args[1], args[2].isEmpty() ? null : args[2])) {
            int enqueued = run(DSL.using(connection, SQLDialect.POSTGRES), args[3], 300);
            System.out.println(args[3] + " enqueued " + enqueued);
        }
    }

    /**
     * Reports step 0 (ready), then ticks {@link Schedules#runDue(java.time.Instant)} once per
     * published step until {@code sim_clock.done}.
     *
     * @return the jobs this scheduler enqueued
     */
    static int run(DSLContext dsl, String name, long timeoutSeconds) {
        Schedules schedules = new Schedules(dsl);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        int lastStep = 0;
        int enqueued = 0;
        report(dsl, name, 0, 0);
        while (true) {
            Record3<Integer, OffsetDateTime, Boolean> clock = dsl.select(
                            DSL.field("step", Integer.class),
                            DSL.field("sim_now", OffsetDateTime.class),
                            DSL.field("done", Boolean.class))
                    .from(DSL.table("sim_clock"))
                    .fetchSingle();
            if (clock.value1() > lastStep) {
                enqueued += schedules.runDue(clock.value2().toInstant());
                lastStep = clock.value1();
                report(dsl, name, lastStep, enqueued);
            } else if (clock.value3()) {
                return enqueued;
            } else if (System.nanoTime() > deadline) {
                throw new IllegalStateException(name + ": no new step within " + timeoutSeconds + " s");
            } else {
                // waiting for the test's next step: a condition, polled, with the deadline above
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
        }
    }

    private static void report(DSLContext dsl, String name, int step, int enqueued) {
        dsl.execute(
                "INSERT INTO sim_progress (scheduler, step, enqueued) VALUES (?, ?, ?) "
                        + "ON CONFLICT (scheduler) DO UPDATE SET step = excluded.step, enqueued = excluded.enqueued",
                name,
                step,
                enqueued);
    }
}

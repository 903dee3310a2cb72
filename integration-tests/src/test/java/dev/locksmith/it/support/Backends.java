package dev.locksmith.it.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.jooq.DSLContext;

/**
 * Terminates a backend and waits until it has exited, on every PostgreSQL locksmith supports.
 * {@code pg_terminate_backend(pid, timeout)} would wait by itself, but PostgreSQL 13 has only the
 * one-argument form (the timeout came in 14), so this polls {@code pg_stat_activity} instead.
 */
public final class Backends {

    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(10);

    private Backends() {}

    /** Terminates {@code pid} and returns once it is gone; fails the test after 10 seconds. */
    public static void terminate(DSLContext dsl, int pid) {
        assertThat(dsl.fetchValue("SELECT pg_terminate_backend(?)", pid))
                .as("backend %d terminated", pid)
                .isEqualTo(true);
        long deadline = System.nanoTime() + EXIT_TIMEOUT.toNanos();
        while (dsl.fetchExists(dsl.selectOne().from("pg_stat_activity").where("pid = ?", pid))) {
            assertThat(System.nanoTime() - deadline)
                    .as("backend %d still running %s after pg_terminate_backend", pid, EXIT_TIMEOUT)
                    .isNegative();
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
    }
}

package dev.locksmith.jobs;

import java.util.Locale;
import org.jooq.Field;
import org.jooq.impl.DSL;

/** Life cycle of a job row. */
public enum JobStatus {
    /** Waiting to be claimed once {@code run_at} has passed. */
    PENDING,
    /** Claimed under a lease by a worker (leased mode only). */
    RUNNING,
    /** Completed and kept for retention ({@link JobQueueConfig#keepCompleted()}). */
    DONE,
    /** Gave up after {@code max_attempts}; {@code last_error} says why. */
    FAILED,
    /** Cancelled before it completed. */
    CANCELLED;

    /** {@return the value stored in {@code jobs.status}: the constant's name in lower case} */
    public String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The value as an SQL literal rather than a bind value. The partial indexes on
     * {@code jobs} ({@code WHERE status = 'pending'} and the like) serve a statement only when
     * the planner can prove their predicate from the statement's, which it cannot do for a
     * bound status in a generic plan: PgJDBC server-prepares a statement from its fifth use on
     * a connection, and the plan PostgreSQL then caches would scan and sort the whole table.
     */
    Field<String> literal() {
        return DSL.inline(dbValue());
    }

    static JobStatus fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}

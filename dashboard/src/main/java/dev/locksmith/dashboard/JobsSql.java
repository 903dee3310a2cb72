package dev.locksmith.dashboard;

import java.util.List;
import org.jooq.Field;
import org.jooq.impl.DSL;

/** Pieces of SQL on {@code jobs} and {@code job_history} that several pages share. */
final class JobsSql {

    static final List<String> STATUSES = List.of("pending", "running", "done", "failed", "cancelled");
    /** Statuses of jobs in the jobs table. */
    static final List<String> LIVE_STATUSES = List.of("pending", "running");
    /** Statuses of jobs in the history ({@code job_history}). */
    static final List<String> FINISHED_STATUSES = List.of("done", "failed", "cancelled");

    private JobsSql() {}

    static Field<String> status(String status) {
        if (!STATUSES.contains(status)) {
            throw new IllegalArgumentException("status must be one of " + STATUSES + ", was " + status);
        }
        return DSL.inline(status);
    }
}

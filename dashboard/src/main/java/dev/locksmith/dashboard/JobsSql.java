package dev.locksmith.dashboard;

import java.util.List;
import org.jooq.Field;
import org.jooq.impl.DSL;

/** Pieces of SQL on {@code jobs} that several pages share. */
final class JobsSql {

    static final List<String> STATUSES = List.of("pending", "running", "done", "failed", "cancelled");

    /**
     * Finished statuses as literals. Literals, not bind values, as in core: the partial indexes
     * ({@code WHERE status IN ('done', 'failed', 'cancelled')}, {@code WHERE status = 'pending'})
     * serve a statement only when the planner can prove their predicate from it.
     */
    static final List<Field<String>> FINISHED = List.of(status("done"), status("failed"), status("cancelled"));

    private JobsSql() {}

    static Field<String> status(String status) {
        if (!STATUSES.contains(status)) {
            throw new IllegalArgumentException("status must be one of " + STATUSES + ", was " + status);
        }
        return DSL.inline(status);
    }
}

package dev.locksmith.jobs.engine;

import dev.locksmith.jobs.JobStatus;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Locale;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.types.DayToSecond;

/** Pieces every statement of the queue is built from. <b>Internal: not API.</b> */
public final class Sql {

    /** The {@code LISTEN}/{@code NOTIFY} channel; the payload is the queue name. */
    public static final String CHANNEL = "locksmith_jobs";

    // Literals, not bind values, so that generic plans can use the partial indexes (see literal).
    static final Field<String> PENDING = literal(JobStatus.PENDING);
    static final Field<String> RUNNING = literal(JobStatus.RUNNING);
    static final Field<String> DONE = literal(JobStatus.DONE);
    static final Field<String> FAILED = literal(JobStatus.FAILED);
    static final Field<String> CANCELLED = literal(JobStatus.CANCELLED);
    /** The statuses of a job that is not finished. */
    static final List<Field<String>> LIVE = List.of(PENDING, RUNNING);
    /** The statuses of a finished job. */
    static final List<Field<String>> FINISHED = List.of(DONE, FAILED, CANCELLED);

    private Sql() {}

    /**
     * A status as an SQL literal rather than a bind value. The partial indexes on {@code jobs}
     * ({@code WHERE status = 'pending'} and the like) serve a statement only when the planner can
     * prove their predicate from the statement's, which it cannot do for a bound status in a
     * generic plan: PgJDBC server-prepares a statement from its fifth use on a connection, and
     * the plan PostgreSQL then caches would scan and sort the whole table.
     */
    static Field<String> literal(JobStatus status) {
        return DSL.inline(status.name().toLowerCase(Locale.ROOT));
    }

    /** {@code statement_timestamp()}: the start of the current statement on the database clock. */
    static Field<OffsetDateTime> statementTime() {
        return DSL.function("statement_timestamp", SQLDataType.TIMESTAMPWITHTIMEZONE);
    }

    /**
     * {@code statement_timestamp() + delay} on the database clock: counted from the statement
     * that writes it, not from the start of the caller's transaction ({@code now()}), so a job
     * enqueued late in a long transaction still waits its whole delay.
     */
    static Field<OffsetDateTime> after(Duration delay) {
        return delay.isZero() ? statementTime() : statementTime().plus(DSL.val(DayToSecond.valueOf(delay)));
    }
}

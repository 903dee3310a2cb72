package dev.locksmith.jobs.engine;

import dev.locksmith.internal.AfterCommit;
import dev.locksmith.internal.Environment;
import dev.locksmith.jobs.WakeUp;
import java.util.Set;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jspecify.annotations.Nullable;

/**
 * How a statement that makes jobs claimable (an enqueue, a retry) wakes idle workers, as the
 * queue's {@link WakeUp} says: decided before the statement, since a {@code NOTIFY} inside the
 * producer's transaction is part of the statement itself. <b>Internal: not API.</b>
 */
final class WakeUps {

    /** What the statement about to run does about waking workers. */
    enum Plan {
        /** Nothing. */
        NONE,
        /** The statement itself sends {@code NOTIFY}, delivered when the transaction commits. */
        IN_STATEMENT,
        /** The caller signals once the statement (auto-committed) returned. */
        AFTER_RETURN,
        /** A signal runs when the caller's transaction commits: registered already. */
        AFTER_COMMIT,
        /**
         * The statement sends {@code NOTIFY} as this data source's one carrier
         * ({@link WakeSignals#tryCarry}); the caller reports it once the statement returned.
         */
        CARRIED_AFTER_RETURN,
        /**
         * The statement sends {@code NOTIFY} as this data source's one carrier; the commit reports
         * it (registered already).
         */
        CARRIED_AT_COMMIT;

        /** Whether the statement itself sends {@code NOTIFY}. */
        boolean notifies() {
            return this == IN_STATEMENT || this == CARRIED_AFTER_RETURN || this == CARRIED_AT_COMMIT;
        }
    }

    private final QueueContext context;
    private final @Nullable WakeSignals signals;

    WakeUps(QueueContext context) {
        this.context = context;
        DataSource dataSource = Environment.of(context.dsl).dataSource();
        // Signals go on connections of the queue's data source; a queue on one connection has none to
        // spare.
        this.signals = dataSource == null ? null : WakeSignals.of(dataSource);
    }

    /**
     * The plan for a statement committing jobs of {@code queues}.
     *
     * @param ctx where the statement runs
     * @param autoCommit whether the statement commits by itself (or in a transaction of the
     *     engine's own that it returns after)
     */
    Plan plan(DSLContext ctx, boolean autoCommit, Set<String> queues) {
        return switch (context.config.wakeUp()) {
            case NONE -> Plan.NONE;
            case IN_TRANSACTION -> Plan.IN_STATEMENT;
            case AFTER_COMMIT -> {
                if (signals == null) {
                    yield Plan.IN_STATEMENT;
                }
                WakeSignals sender = signals;
                // On Citus a statement's writes may reach the workers through Citus's own two-phase
                // commit, which PostgreSQL refuses to prepare after a NOTIFY: never carried there.
                boolean mayCarry = context.shards(ctx) == 0;
                if (autoCommit) {
                    yield mayCarry && sender.tryCarry() ? Plan.CARRIED_AFTER_RETURN : Plan.AFTER_RETURN;
                }
                Environment environment = Environment.of(context.dsl);
                if (environment.afterCommitByHook(() -> sender.signal(queues))) {
                    yield Plan.AFTER_COMMIT;
                }
                // Only a transaction locksmith sees end, and that will not be prepared, may carry.
                if (mayCarry && AfterCommit.mayNotify() && sender.tryCarry()) {
                    AfterCommit.register(() -> sender.carried(queues), sender::release);
                    yield Plan.CARRIED_AT_COMMIT;
                }
                if (AfterCommit.register(() -> sender.signal(queues))) {
                    yield Plan.AFTER_COMMIT;
                }
                // A transaction no one tells locksmith about: NOTIFY inside it, rather than lose the
                // wake-up (or send it before the jobs are visible).
                yield Plan.IN_STATEMENT;
            }
        };
    }

    /**
     * The statement failed: a grant to carry the signal ends now rather than when it lapses.
     *
     * @param plan the statement's plan
     */
    void failed(Plan plan) {
        if (signals != null && (plan == Plan.CARRIED_AFTER_RETURN || plan == Plan.CARRIED_AT_COMMIT)) {
            signals.release();
        }
    }

    /** The statement returned: signals now when the plan says so. */
    void returned(Plan plan, Set<String> queues) {
        if (signals == null) {
            return;
        }
        if (plan == Plan.AFTER_RETURN) {
            signals.signal(queues);
        } else if (plan == Plan.CARRIED_AFTER_RETURN) {
            signals.carried(queues);
        }
    }
}

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
    enum Kind {
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
        CARRIED_AT_COMMIT
    }

    /**
     * A statement's plan.
     *
     * @param kind what it does
     * @param grant the carrier's grant ({@link WakeSignals#tryCarry}) for the carried kinds, else 0
     */
    record Plan(Kind kind, long grant) {

        static final Plan NONE = new Plan(Kind.NONE, 0);
        static final Plan IN_STATEMENT = new Plan(Kind.IN_STATEMENT, 0);
        static final Plan AFTER_RETURN = new Plan(Kind.AFTER_RETURN, 0);
        static final Plan AFTER_COMMIT = new Plan(Kind.AFTER_COMMIT, 0);

        /** Whether the statement itself sends {@code NOTIFY}. */
        boolean notifies() {
            return kind == Kind.IN_STATEMENT || grant != 0;
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
     * @param carry whether the statement may carry the {@code NOTIFY} itself (false where it would
     *     be one more statement, which the sender may as well send)
     */
    Plan plan(DSLContext ctx, boolean autoCommit, Set<String> queues, boolean carry) {
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
                boolean mayCarry = carry && context.shards(ctx) == 0;
                if (autoCommit) {
                    long grant = mayCarry ? sender.tryCarry() : 0;
                    yield grant != 0 ? new Plan(Kind.CARRIED_AFTER_RETURN, grant) : Plan.AFTER_RETURN;
                }
                // Carried only in a transaction that commits in one phase on the statement's own
                // connection (never prepared: PostgreSQL refuses to prepare after a NOTIFY), as a
                // commit hook (Spring's) or a jOOQ transaction locksmith sees end says; hooks first,
                // since a jOOQ transaction nested in one a hook manages ends before the real commit.
                long grant = mayCarry && !AfterCommit.preparedScopeOpen() ? sender.tryCarry() : 0;
                Runnable carried = () -> sender.carried(grant, queues);
                Runnable released = () -> sender.release(grant);
                Environment environment = Environment.of(context.dsl);
                try {
                    if (grant != 0 && environment.afterOnePhaseCommitByHook(ctx, carried, released)) {
                        yield new Plan(Kind.CARRIED_AT_COMMIT, grant);
                    }
                    if (environment.afterCommitByHook(() -> sender.signal(queues))) {
                        released.run();
                        yield Plan.AFTER_COMMIT;
                    }
                    if (grant != 0 && AfterCommit.mayNotifyIn(ctx) && AfterCommit.register(carried, released)) {
                        yield new Plan(Kind.CARRIED_AT_COMMIT, grant);
                    }
                } catch (RuntimeException hookFailed) {
                    released.run();
                    throw hookFailed;
                }
                released.run();
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
        if (signals != null && plan.grant() != 0) {
            signals.release(plan.grant());
        }
    }

    /** The statement returned: signals now when the plan says so. */
    void returned(Plan plan, Set<String> queues) {
        if (signals == null) {
            return;
        }
        if (plan.kind() == Kind.AFTER_RETURN) {
            signals.signal(queues);
        } else if (plan.kind() == Kind.CARRIED_AFTER_RETURN) {
            signals.carried(plan.grant(), queues);
        }
    }
}

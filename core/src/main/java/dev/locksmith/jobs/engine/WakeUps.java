package dev.locksmith.jobs.engine;

import dev.locksmith.internal.Environment;
import dev.locksmith.jobs.WakeUp;
import java.util.Set;
import javax.sql.DataSource;
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
        AFTER_COMMIT
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
     * @param autoCommit whether the statement commits by itself (or in a transaction of the
     *     engine's own that it returns after)
     */
    Plan plan(boolean autoCommit, Set<String> queues) {
        return switch (context.config.wakeUp()) {
            case NONE -> Plan.NONE;
            case IN_TRANSACTION -> Plan.IN_STATEMENT;
            case AFTER_COMMIT -> {
                if (signals == null) {
                    yield Plan.IN_STATEMENT;
                }
                if (autoCommit) {
                    yield Plan.AFTER_RETURN;
                }
                // A transaction no one tells locksmith about: NOTIFY inside it, rather than lose the
                // wake-up (or send it before the jobs are visible).
                WakeSignals sender = signals;
                yield Environment.of(context.dsl).afterCommit(() -> sender.signal(queues))
                        ? Plan.AFTER_COMMIT
                        : Plan.IN_STATEMENT;
            }
        };
    }

    /** The statement returned: signals now when the plan says so. */
    void returned(Plan plan, Set<String> queues) {
        if (plan == Plan.AFTER_RETURN && signals != null) {
            signals.signal(queues);
        }
    }
}

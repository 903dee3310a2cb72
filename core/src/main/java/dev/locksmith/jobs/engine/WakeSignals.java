package dev.locksmith.jobs.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wake-up signals of one queue's committed enqueues: {@code NOTIFY locksmith_jobs, '<queue>'}
 * sent after the producers' transactions committed, on a connection of the queue's own, never
 * inside a producer's transaction (whose commit would then take PostgreSQL's database-wide notify
 * lock, serializing every producer). Signals that arrive while one is being sent are coalesced:
 * however many producers commit meanwhile, the next statement notifies each of their queues once.
 * One daemon thread of the JVM sends for every queue, each send one auto-committed statement on a
 * connection of the queue's data source (plain JDBC: the application's jOOQ listeners see no
 * statement it did not make).
 * <b>Internal: not API.</b>
 */
public final class WakeSignals {

    private static final Logger LOG = LoggerFactory.getLogger(WakeSignals.class);
    private static final LinkedBlockingQueue<WakeSignals> READY = new LinkedBlockingQueue<>();
    private static final AtomicBoolean SENDER_STARTED = new AtomicBoolean();

    /**
     * One statement for every queue pending: the channel is a constant, the queues a bound array.
     * Its transaction commits without waiting for the WAL flush ({@code synchronous_commit} off
     * for that transaction only): a notification is delivered at commit and is not durable
     * anyway, and a flush per signal would compete with the producers' and workers' commits.
     */
    private static final String SQL = "SELECT pg_notify('" + Sql.CHANNEL + "', n.q)"
            + " FROM set_config('synchronous_commit', 'off', true) AS s, unnest(?::text[]) AS n(q)";

    private final DataSource dataSource;
    private final Set<String> pending = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean queued = new AtomicBoolean();
    private final AtomicBoolean failedBefore = new AtomicBoolean();

    WakeSignals(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * Wakes the workers of {@code queues} as soon as the sender gets to it.
     *
     * @param queues queues whose jobs committed
     */
    public void signal(Collection<String> queues) {
        pending.addAll(queues);
        if (queued.compareAndSet(false, true)) {
            startSender();
            READY.add(this);
        }
    }

    /** Sends what is pending, in one statement; a failure is logged and the signals dropped. */
    private void send() {
        queued.set(false);
        List<String> queues = new ArrayList<>(pending);
        if (queues.isEmpty()) {
            return;
        }
        pending.removeAll(queues);
        try (Connection c = dataSource.getConnection()) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            try (PreparedStatement statement = c.prepareStatement(SQL)) {
                statement.setArray(1, c.createArrayOf("text", queues.toArray()));
                statement.execute();
            }
            failedBefore.set(false);
        } catch (SQLException | RuntimeException e) {
            // Workers still poll: a lost wake-up delays jobs by at most their poll interval.
            if (failedBefore.compareAndSet(false, true)) {
                LOG.warn(
                        "could not wake the workers of {} after their jobs committed; they find them when they poll",
                        queues,
                        e);
            } else {
                LOG.debug("could not wake the workers of {} again", queues, e);
            }
        }
    }

    private static void startSender() {
        if (SENDER_STARTED.get() || !SENDER_STARTED.compareAndSet(false, true)) {
            return;
        }
        Thread sender = new Thread(
                () -> {
                    while (true) {
                        try {
                            READY.take().send();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return;
                        } catch (RuntimeException e) {
                            LOG.debug("a wake-up signal failed", e);
                        }
                    }
                },
                "locksmith-wake-signals");
        sender.setDaemon(true);
        sender.start();
    }
}

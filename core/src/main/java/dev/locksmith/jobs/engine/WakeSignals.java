package dev.locksmith.jobs.engine;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wake-up signals of the committed enqueues of every queue on one data source:
 * {@code NOTIFY locksmith_jobs, '<queue>'} sent after the producers' transactions committed, on a
 * connection of that data source, never inside a producer's transaction (whose commit would then
 * take PostgreSQL's database-wide notify lock, serializing every producer). Signals that arrive
 * while one is being sent are coalesced: however many producers commit meanwhile, the next
 * statement notifies each of their queues once. Each send is one auto-committed statement (plain
 * JDBC: the application's jOOQ listeners see no statement it did not make), at most one at a time
 * per data source, on a daemon thread of a pool shared by the JVM: a data source that cannot give
 * a connection (exhausted, or its server unreachable) delays its own signals, never another's.
 *
 * <p>Statements go at least {@link #MIN_INTERVAL_NANOS 2 ms} apart: a signal after a quiet spell
 * goes at once, signals during the interval go together at its end. Besides sparing the server a
 * statement per commit, the gap keeps PgJDBC listeners responsive: notifications less than a
 * millisecond apart keep one reading and handing over none (see the runtime's
 * {@code PromptNotifications}, which spares locksmith's own listeners that wait; the gap spares
 * those this library does not run, on the same channel).
 *
 * <p>One producer at a time may carry the signal itself ({@link #tryCarry}): its enqueue statement
 * sends the {@code NOTIFY} inside its transaction, which delivers it at commit without the hand-off
 * to the sender, a connection and a round trip of its own. Only one transaction per data source
 * then takes PostgreSQL's notify lock at commit, so producers do not queue on it; whoever enqueues
 * meanwhile is signalled by the sender after commit, as before. <b>Internal: not API.</b>
 */
public final class WakeSignals {

    private static final Logger LOG = LoggerFactory.getLogger(WakeSignals.class);

    /**
     * One instance per data source (the same object: a data source's own {@code equals} and
     * {@code hashCode} are never called), by identity hash code, held weakly: the queues on a data
     * source hold its instance, and it goes when they do.
     */
    private static final Map<Integer, List<Held>> BY_DATA_SOURCE = new HashMap<>();

    /** Where the instances no queue holds any more are reported, to leave the map. */
    private static final ReferenceQueue<WakeSignals> GONE = new ReferenceQueue<>();

    /** Threads made when a send starts and none is idle, gone after a minute idle. */
    private static final ExecutorService SENDERS =
            new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), task -> {
                Thread sender = new Thread(task, "locksmith-wake-signals");
                sender.setDaemon(true);
                return sender;
            });

    /**
     * One statement for every queue pending: the channel is a constant, the queues a bound array.
     * Its transaction commits without waiting for the WAL flush ({@code synchronous_commit} off
     * for that transaction only): a notification is delivered at commit and is not durable
     * anyway, and a flush per signal would compete with the producers' and workers' commits.
     */
    private static final String SQL = "SELECT pg_notify('" + Sql.CHANNEL + "', n.q)"
            + " FROM set_config('synchronous_commit', 'off', true) AS s, unnest(?::text[]) AS n(q)";

    /**
     * The least time between two statements of one data source: above PgJDBC's 1 ms wait for a
     * further notification (measured, a PgJDBC listener alone: at 2 ms apart it heard each
     * within 1.1 ms at p50 and 1.9 ms at p99; at 1 ms apart, 44-76 ms at p50).
     */
    static final long MIN_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    /**
     * How long a producer's grant to carry the signal lasts at most: a grant whose transaction
     * rolled back (and so never reported its commit) lapses after it, and until then the others'
     * signals go by the sender, as without a carrier. A transaction still open by then may commit
     * beside the next carrier's: two notifying commits, not a queue of them.
     */
    static final long CARRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final DataSource dataSource;
    /**
     * The current grant to carry: when it lapses ({@link System#nanoTime()}, its lowest bit set so
     * that it is never 0); 0 when there is none.
     */
    private final AtomicLong carrying = new AtomicLong();

    private final Set<String> pending = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean sending = new AtomicBoolean();
    private final AtomicBoolean failedBefore = new AtomicBoolean();
    /** When the last statement was sent, or a carrier committed ({@link System#nanoTime()}). */
    private volatile long lastSent = System.nanoTime() - MIN_INTERVAL_NANOS;

    private WakeSignals(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * The signals of the queues on {@code dataSource}, sent on its connections.
     *
     * @param dataSource the queues' data source
     * @return the one instance for it while any queue holds it
     */
    static WakeSignals of(DataSource dataSource) {
        int key = System.identityHashCode(dataSource);
        synchronized (BY_DATA_SOURCE) {
            for (Object gone = GONE.poll(); gone != null; gone = GONE.poll()) {
                Held held = (Held) gone;
                List<Held> same = BY_DATA_SOURCE.get(held.key);
                if (same != null && same.remove(held) && same.isEmpty()) {
                    BY_DATA_SOURCE.remove(held.key);
                }
            }
            List<Held> same = BY_DATA_SOURCE.computeIfAbsent(key, k -> new ArrayList<>(1));
            for (Held held : same) {
                WakeSignals signals = held.get();
                if (signals != null && signals.dataSource == dataSource) {
                    return signals;
                }
            }
            WakeSignals signals = new WakeSignals(dataSource);
            same.add(new Held(signals, key));
            return signals;
        }
    }

    /** A weak reference to an instance, with the key it is filed under. */
    private static final class Held extends WeakReference<WakeSignals> {
        final int key;

        Held(WakeSignals signals, int key) {
            super(signals, GONE);
            this.key = key;
        }
    }

    /**
     * Wakes this JVM's workers of {@code queues} now ({@link LocalWakeups}), and every worker
     * as soon as this data source's sender gets to it.
     *
     * @param queues queues whose jobs committed
     */
    public void signal(Collection<String> queues) {
        pending.addAll(queues);
        if (sending.compareAndSet(false, true)) {
            SENDERS.execute(this::sendAll);
        }
        LocalWakeups.wake(queues);
    }

    /**
     * Grants the calling producer the carrying of the signal, inside its transaction, when no
     * other producer holds a grant, the sender is idle, and the last notification went at least
     * {@link #MIN_INTERVAL_NANOS} ago (so that one carried and one sent do not arrive together).
     * A producer granted it sends {@code NOTIFY} in its enqueue statement and calls
     * {@link #carried} once its transaction committed, or {@link #release} if it will not.
     *
     * @return the grant, never 0; or 0 when the caller does not carry the signal
     */
    long tryCarry() {
        long now = System.nanoTime();
        long grant = carrying.get();
        if ((grant != 0 && grant - now > 0) || sending.get() || now - lastSent < MIN_INTERVAL_NANOS) {
            return 0;
        }
        long mine = (now + CARRY_NANOS) | 1;
        return carrying.compareAndSet(grant, mine) ? mine : 0;
    }

    /**
     * A carrier's transaction committed: its {@code NOTIFY} went with the commit. Wakes this JVM's
     * workers of {@code queues} in-process and ends the grant (if it is still the current one).
     *
     * @param grant what {@link #tryCarry} returned
     * @param queues queues whose jobs committed
     */
    void carried(long grant, Collection<String> queues) {
        lastSent = System.nanoTime();
        carrying.compareAndSet(grant, 0);
        LocalWakeups.wake(queues);
    }

    /**
     * Gives back a grant whose producer will not carry the signal after all (if it is still the
     * current one: a lapsed grant's holder must not end the next producer's).
     *
     * @param grant what {@link #tryCarry} returned
     */
    void release(long grant) {
        carrying.compareAndSet(grant, 0);
    }

    /**
     * Sends until nothing is pending: what arrived during one statement, or during the interval
     * after it, goes in the next.
     */
    private void sendAll() {
        try {
            sendUntilNothingPending();
        } catch (Throwable unexpected) {
            // send() handles SQL and runtime failures; anything else must not leave `sending` set,
            // which would end this data source's signals for good
            sending.set(false);
            throw unexpected;
        }
    }

    private void sendUntilNothingPending() {
        while (true) {
            if (pending.isEmpty()) {
                sending.set(false);
                // a signal that came after the check but saw `sending` still set is sent here
                if (pending.isEmpty() || !sending.compareAndSet(false, true)) {
                    return;
                }
            }
            long wait = lastSent + MIN_INTERVAL_NANOS - System.nanoTime();
            if (wait > 0) {
                // a pool thread's stray interrupt would make every park return at once
                Thread.interrupted();
                LockSupport.parkNanos(wait);
                continue;
            }
            // only this thread removes from `pending`: what the check above saw is still there
            List<String> queues = new ArrayList<>(pending);
            pending.removeAll(queues);
            send(queues);
            lastSent = System.nanoTime();
        }
    }

    /** One statement for {@code queues}; a failure is logged and the signals dropped. */
    private void send(List<String> queues) {
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
}

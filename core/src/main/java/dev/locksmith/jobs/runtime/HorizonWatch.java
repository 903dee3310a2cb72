package dev.locksmith.jobs.runtime;

import dev.locksmith.audit.HorizonHolder;
import dev.locksmith.audit.HorizonReport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;

/**
 * A worker's watch on the database's MVCC horizon: at most once per check interval (a fifth of the
 * threshold, between 1 s and 1 min), whichever of the worker's threads calls {@link #runIfDue()}
 * first reads {@link HorizonReport#holders()} (one statement) and logs at WARN each holder that
 * has held the horizon back for the threshold or longer, once per holder.
 *
 * <p>Once per holder in this JVM, whatever the number of workers: a holder is the kind, its pid
 * or name, and when it began (a session's transaction start, a prepared transaction's time), so a
 * session that opens a new transaction is a new holder. Slots and standbys carry no start time,
 * and sessions hide theirs from a role without {@code pg_read_all_stats}: such a holder counts
 * from when a worker first saw it at the same xmin, so a slot whose xmin moves on is a new holder
 * and one stuck at one xmin for the threshold is warned about.
 */
final class HorizonWatch {

    private static final Duration MIN_CHECK = Duration.ofSeconds(1);
    private static final Duration MAX_CHECK = Duration.ofMinutes(1);
    private static final long FORGET_AFTER_NANOS = MAX_CHECK.multipliedBy(3).toNanos();

    /** Holders seen by a worker of this class loader: when first seen (nanoTime), and whether warned. */
    private static final Map<String, Seen> SEEN = new ConcurrentHashMap<>();

    private final HorizonReport report;
    private final Duration threshold;
    private final Due due;
    private final Logger log;
    private final AtomicBoolean failedBefore = new AtomicBoolean();
    private final boolean off;

    /** When a holder was first seen, and whether it was warned about. */
    private static final class Seen {
        final long firstSeen;
        final AtomicBoolean warned = new AtomicBoolean();
        volatile long lastSeen;

        Seen(long now) {
            this.firstSeen = now;
            this.lastSeen = now;
        }
    }

    /**
     * @param report reads the holders of the queue's database
     * @param threshold how long a holder may hold the horizon before it is logged; zero turns the
     *     watch off
     * @param log the worker's logger
     */
    HorizonWatch(HorizonReport report, Duration threshold, Logger log) {
        this.report = report;
        this.threshold = threshold;
        this.log = log;
        this.off = threshold.isZero();
        Duration fifth = threshold.dividedBy(5);
        Duration interval =
                fifth.compareTo(MIN_CHECK) < 0 ? MIN_CHECK : fifth.compareTo(MAX_CHECK) > 0 ? MAX_CHECK : fifth;
        this.due = new Due(interval, true);
    }

    /** Checks when a check is due and no other thread took it; else returns at once. Never throws. */
    void runIfDue() {
        if (off) {
            return;
        }
        if (!due.take()) {
            return;
        }
        long now = System.nanoTime();
        List<HorizonHolder> holders;
        try {
            holders = report.holders();
            failedBefore.set(false);
        } catch (RuntimeException e) {
            if (failedBefore.compareAndSet(false, true)) {
                log.warn("could not read what holds the MVCC horizon back; retried in {}", due.interval(), e);
            } else {
                log.debug("could not read what holds the MVCC horizon back, again", e);
            }
            return;
        }
        for (HorizonHolder h : holders) {
            Seen seen = SEEN.computeIfAbsent(key(h), k -> new Seen(now));
            seen.lastSeen = now;
            Duration held = h.age().orElse(Duration.ofNanos(now - seen.firstSeen));
            if (held.compareTo(threshold) >= 0 && seen.warned.compareAndSet(false, true)) {
                warn(h, held);
            }
        }
        // A holder's key never comes back once it is gone (it names the start, or the xmin):
        // forget keys no worker has seen for longer than any worker's check interval.
        SEEN.values().removeIf(seen -> now - seen.lastSeen > FORGET_AFTER_NANOS);
    }

    private void warn(HorizonHolder h, Duration held) {
        log.warn(
                "the MVCC horizon of database {} is held back by {} for {}{} ({} transactions since its xmin {}){}: "
                        + "VACUUM cannot remove rows that died since, so the queue's dead rows pile up and claims slow "
                        + "down; {}",
                h.database().orElse("(all databases)"),
                h.identity(),
                held.toSeconds() + " s",
                h.since().isPresent() ? "" : " at least",
                h.xminAge(),
                h.xmin(),
                h.state().map(s -> ", state " + s).orElse("")
                        + h.query().map(q -> ", query: " + firstLine(q)).orElse(""),
                advice(h.kind()));
    }

    static String advice(HorizonHolder.Kind kind) {
        return switch (kind) {
            case BACKEND ->
                "end that transaction (commit it, or pg_terminate_backend(pid)), and set "
                        + "idle_in_transaction_session_timeout for its role";
            case REPLICATION_SLOT ->
                "start its consumer again, or drop the slot (pg_drop_replication_slot) if it " + "is not needed";
            case PREPARED_TRANSACTION ->
                "COMMIT PREPARED or ROLLBACK PREPARED it (a two-phase worker's resolver " + "settles its own)";
            case STANDBY -> "end the long query on the standby, or turn hot_standby_feedback off there";
        };
    }

    private static String firstLine(String query) {
        String line = query.strip().lines().findFirst().orElse("");
        return line.length() > 200 ? line.substring(0, 200) + "..." : line;
    }

    /** The database, the kind, who, and when it began (or the xmin, when that is not known). */
    static String key(HorizonHolder h) {
        String who =
                h.name().orElse(h.pid().isPresent() ? Integer.toString(h.pid().getAsInt()) : "");
        String start = h.since().map(Object::toString).orElse("xmin " + h.xmin());
        return h.database().orElse("") + '|' + h.kind() + '|' + who + '|' + start;
    }
}

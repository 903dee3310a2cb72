package dev.locksmith.spring;

import dev.locksmith.audit.HorizonHolder;
import dev.locksmith.audit.HorizonReport;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.QueueDepth;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.pool.PoolStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jooq.DSLContext;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;

/**
 * The {@code locksmith} health indicator (Spring Boot Actuator), registered unless
 * {@code locksmith.health.enabled=false}.
 *
 * <ul>
 *   <li><b>DOWN</b> when the database does not answer, or a check fails (a table missing, for
 *       instance), with the error.</li>
 *   <li><b>OUT_OF_SERVICE</b> when a queue has more pending jobs than
 *       {@code locksmith.health.max-pending}, or its oldest due pending job has waited longer than
 *       {@code locksmith.health.max-oldest-pending-age}, or the channel account pool has accounts
 *       and none of them idle (every one leased, none expired): the instance works, but the system
 *       is behind; the {@code problems} detail says which.</li>
 *   <li><b>UP</b> otherwise.</li>
 * </ul>
 *
 * <p>Details: {@code queues} (per queue {@code pending}, {@code running}, each counted up to
 * {@code locksmith.health.depth-cap}, and {@code oldestPendingAge}) for the queues of the
 * {@link LocksmithHandler}s and of {@code locksmith.queues}, when the {@code queue} module is
 * used; {@code pool} ({@code total}, {@code idle}, {@code leased}, {@code expired}) when the
 * {@code pool} module is used; {@code horizon}, what holds the database's MVCC horizon back the
 * longest ({@code HorizonReport}: its {@code holder}, {@code kind}, {@code heldFor},
 * {@code xminAge} and the number of {@code holders}), or {@code none}; {@code problems}. A held
 * horizon is a detail, not a status: it slows the queue down without stopping this instance, and
 * the workers log it at WARN past {@code locksmith.horizon.warn-after}. Each check is one bounded
 * statement ({@code JobQueue.depth}, {@code ChannelAccountPool.stats}, {@code HorizonReport.holders});
 * {@code ChannelAccountPool.stats} scans the pool table, so on very large pools poll the health
 * endpoint sparingly.
 */
public final class LocksmithHealthIndicator extends AbstractHealthIndicator {

    private final DSLContext dsl;
    private final @Nullable JobQueue queue;
    private final Set<String> queues;
    private final @Nullable ChannelAccountPool pool;
    private final LocksmithProperties.Health thresholds;
    private final HorizonReport horizon;

    LocksmithHealthIndicator(
            DSLContext dsl,
            @Nullable JobQueue queue,
            Set<String> queues,
            @Nullable ChannelAccountPool pool,
            LocksmithProperties.Health thresholds) {
        super("locksmith health check failed");
        this.dsl = dsl;
        this.queue = queue;
        this.queues = Set.copyOf(queues);
        this.pool = pool;
        this.thresholds = thresholds;
        this.horizon = new HorizonReport(dsl);
    }

    /**
     * Checks the database, the queues and the pool.
     *
     * @param builder the health to fill in
     */
    @Override
    protected void doHealthCheck(Health.Builder builder) {
        dsl.selectOne().fetchSingle();
        List<String> problems = new ArrayList<>();
        JobQueue jobs = queue;
        if (jobs != null && !queues.isEmpty()) {
            Map<String, Object> details = new LinkedHashMap<>();
            for (String name : new java.util.TreeSet<>(queues)) {
                QueueDepth depth = jobs.depth(name, thresholds.depthCap());
                Map<String, Object> detail = new LinkedHashMap<>();
                detail.put("pending", depth.pending());
                detail.put("running", depth.running());
                detail.put(
                        "oldestPendingAge",
                        depth.oldestDuePendingAge().map(Duration::toString).orElse("none"));
                details.put(name, detail);
                Long maxPending = thresholds.maxPending();
                if (maxPending != null && depth.pending() > maxPending) {
                    problems.add("queue " + name + ": " + depth.pending() + " pending jobs, more than "
                            + "locksmith.health.max-pending (" + maxPending + ")");
                }
                Duration maxAge = thresholds.maxOldestPendingAge();
                Duration age = depth.oldestDuePendingAge().orElse(Duration.ZERO);
                if (maxAge != null && age.compareTo(maxAge) > 0) {
                    problems.add("queue " + name + ": the oldest due pending job has waited " + age + ", longer than "
                            + "locksmith.health.max-oldest-pending-age (" + maxAge + ")");
                }
            }
            builder.withDetail("queues", details);
        }
        ChannelAccountPool accounts = pool;
        if (accounts != null) {
            PoolStats stats = accounts.stats();
            Map<String, Object> detail = new LinkedHashMap<>();
            detail.put("total", stats.total());
            detail.put("idle", stats.idle());
            detail.put("leased", stats.leased());
            detail.put("expired", stats.expired());
            builder.withDetail("pool", detail);
            if (stats.total() > 0 && stats.idle() + stats.expired() == 0) {
                problems.add("pool: all " + stats.total() + " channel accounts are leased, none is idle");
            }
        }
        builder.withDetail("horizon", horizon());
        builder.withDetail("problems", problems);
        builder.status(problems.isEmpty() ? Status.UP : Status.OUT_OF_SERVICE);
    }

    /** The oldest holder of the MVCC horizon, or {@code none}. */
    private Object horizon() {
        List<HorizonHolder> holders = horizon.holders();
        if (holders.isEmpty()) {
            return "none";
        }
        HorizonHolder oldest = holders.get(0);
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("holder", oldest.identity());
        detail.put("kind", oldest.kind().name());
        detail.put("heldFor", oldest.age().map(Duration::toString).orElse("unknown"));
        detail.put("xminAge", oldest.xminAge());
        detail.put("holders", holders.size());
        return detail;
    }
}

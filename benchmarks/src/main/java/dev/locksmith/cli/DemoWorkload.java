package dev.locksmith.cli;

import static dev.locksmith.codegen.Tables.ACCOUNTS;

import dev.locksmith.Backoff;
import dev.locksmith.LockWait;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.audit.LockAudit;
import dev.locksmith.audit.LockAuditConfig;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.schedules.Schedule;
import dev.locksmith.schedules.SchedulerWorker;
import dev.locksmith.schedules.Trigger;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/**
 * Something for `locksmith ui` to show on a scratch database: producers and workers on three
 * queues (some jobs fail, some for good), a recurring schedule, a channel account pool with leases
 * that run out, and every 20 s a transaction that holds an account row for 6 s while two others
 * wait for it through the lock audit (one gives up after 2 s, recorded as a timeout).
 */
final class DemoWorkload implements AutoCloseable {

    private final List<AutoCloseable> parts = new ArrayList<>();
    private final ScheduledExecutorService timers;

    private DemoWorkload(ScheduledExecutorService timers) {
        this.timers = timers;
    }

    static DemoWorkload start(DSLContext dsl, DataSource dataSource) {
        AtomicInteger n = new AtomicInteger();
        ScheduledExecutorService timers = Executors.newScheduledThreadPool(4, r -> {
            Thread t = new Thread(r, "demo-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        DemoWorkload demo = new DemoWorkload(timers);
        JobQueueConfig keep = JobQueueConfig.builder()
                .keepCompleted(true)
                .retryBackoff(new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(20), 2.0, 0.5))
                .build();
        JobQueue queue = new JobQueue(dsl, keep);
        for (String name : List.of("emails", "billing", "reports")) {
            demo.parts.add(JobWorker.builder(queue, name, (job, tx) -> {
                        ThreadLocalRandom random = ThreadLocalRandom.current();
                        Thread.sleep(random.nextInt(20, name.equals("reports") ? 400 : 120)); // the "work"
                        if (name.equals("billing") && random.nextInt(100) < 15) {
                            throw new IllegalStateException("card declined for order " + job.payload());
                        }
                        if (name.equals("emails") && random.nextInt(100) < 3) {
                            throw new java.io.UncheckedIOException(
                                    new java.io.IOException("SMTP 451: try again later"));
                        }
                    })
                    .threads(2)
                    .handlerFailureLogLevel(org.slf4j.event.Level.DEBUG) // failures are part of the demo
                    .pollInterval(Duration.ofMillis(500))
                    .build()
                    .start());
        }
        SchedulerWorker scheduler = SchedulerWorker.builder(dsl).build();
        scheduler
                .schedules()
                .register(
                        dsl,
                        Schedule.builder(
                                        "hourly-digest",
                                        Trigger.every(Duration.ofSeconds(30)),
                                        NewJob.of("reports", "digest"))
                                .build());
        scheduler
                .schedules()
                .register(
                        dsl,
                        Schedule.builder(
                                        "nightly-export",
                                        Trigger.cron("0 2 * * *", "Europe/Berlin"),
                                        NewJob.of("reports", "export"))
                                .build());
        demo.parts.add(scheduler.start());

        timers.scheduleAtFixedRate(
                () -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    List<NewJob> jobs = new ArrayList<>();
                    for (int i = random.nextInt(2, 12); i > 0; i--) {
                        jobs.add(NewJob.builder("emails", "welcome")
                                .payload("{\"user\": " + random.nextInt(100_000) + "}")
                                .build());
                    }
                    if (random.nextInt(3) == 0) {
                        jobs.add(NewJob.builder("billing", "charge")
                                .payload("{\"order\": " + random.nextInt(100_000) + ", \"cents\": "
                                        + random.nextInt(100, 90_000) + "}")
                                .maxAttempts(2)
                                .build());
                    }
                    quietly(() -> queue.enqueueAll(dsl, jobs));
                },
                0,
                300,
                TimeUnit.MILLISECONDS);

        ChannelAccountPool pool = new ChannelAccountPool(dsl);
        List<String> keys = new ArrayList<>();
        for (int i = 1; i <= 40; i++) {
            keys.add(String.format("GDEMO%04d", i));
        }
        pool.register(dsl, keys);
        timers.scheduleAtFixedRate(
                () -> quietly(() -> pool.acquire(
                        Duration.ofSeconds(ThreadLocalRandom.current().nextInt(5, 90)),
                        "payouts-" + ThreadLocalRandom.current().nextInt(1, 4))),
                0,
                2,
                TimeUnit.SECONDS);

        Accounts accounts = new Accounts(dsl);
        long account = accounts.open(new BigDecimal("1000.00")).id();
        LockAudit audit = new LockAudit(
                dsl,
                LockAuditConfig.builder()
                        .slowWaitThreshold(Duration.ofMillis(500))
                        .build());
        demo.parts.add(audit);
        timers.scheduleAtFixedRate(() -> quietly(() -> contend(dsl, audit, account)), 3, 20, TimeUnit.SECONDS);
        return demo;
    }

    /** One transaction holds the account's row for 6 s; two others wait for it, one for at most 2 s. */
    private static Object contend(DSLContext dsl, LockAudit audit, long account) throws InterruptedException {
        Thread holder = new Thread(
                () -> quietly(() -> dsl.transactionResult(c -> {
                    c.dsl()
                            .update(ACCOUNTS)
                            .set(ACCOUNTS.VERSION, ACCOUNTS.VERSION.plus(1))
                            .where(ACCOUNTS.ID.eq(account))
                            .execute();
                    Thread.sleep(6_000); // holds the row lock while the waiters queue behind it
                    return null;
                })),
                "demo-holder");
        holder.start();
        Thread.sleep(300);
        List<Thread> waiters = new ArrayList<>();
        for (Duration wait : List.of(Duration.ofSeconds(2), Duration.ofSeconds(10))) {
            Thread t = new Thread(
                    () -> quietly(() -> dsl.transactionResult(c -> audit.guard(
                            c.dsl(),
                            "accounts:" + account,
                            LockWait.upTo(wait),
                            () -> new Accounts(dsl).lockForUpdate(c.dsl(), account, LockWait.upTo(wait))))),
                    "demo-waiter");
            t.start();
            waiters.add(t);
        }
        holder.join(15_000);
        for (Thread t : waiters) {
            t.join(15_000);
        }
        return null;
    }

    @FunctionalInterface
    private interface Work {
        Object run() throws Exception;
    }

    private static void quietly(Work work) {
        try {
            work.run();
        } catch (Exception e) {
            // A demo: a lock timeout or a failed enqueue is part of the show, not a reason to stop.
        }
    }

    @Override
    public void close() throws Exception {
        timers.shutdownNow();
        timers.awaitTermination(10, TimeUnit.SECONDS);
        for (int i = parts.size() - 1; i >= 0; i--) {
            parts.get(i).close();
        }
    }
}

package dev.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.jobs.ConcurrencyLimits;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.RateLimits;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.spring.LocksmithProperties.Queue.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** Workers for @LocksmithHandler beans and methods, in each mode, in Spring transactions; and their graceful stop. */
class WorkersTest {

    private static ScratchDatabase database;

    @BeforeAll
    static void database() {
        database = TestDatabases.migrated("workers");
    }

    private static ApplicationContextRunner runner() {
        return TestDatabases.runner(database).withPropertyValues("locksmith.schema.migrate=false");
    }

    /** Jobs handled, by queue, with whether a Spring transaction was active around the handler. */
    static final Map<String, ConcurrentLinkedQueue<String>> HANDLED = new ConcurrentHashMap<>();

    static CountDownLatch allHandled;

    static void handled(String queue, Job job) {
        HANDLED.computeIfAbsent(queue, q -> new ConcurrentLinkedQueue<>())
                .add(job.id() + (TransactionSynchronizationManager.isActualTransactionActive() ? " in tx" : " no tx"));
        allHandled.countDown();
    }

    @Test
    void everyKindOfHandlerRunsItsJobsExactlyOnceInASpringTransaction() {
        HANDLED.clear();
        int perQueue = 20;
        allHandled = new CountDownLatch(3 * perQueue);
        runner().withUserConfiguration(ThreeHandlers.class)
                .withPropertyValues(
                        "locksmith.queues.emails.threads=2",
                        "locksmith.queues.reports.batch-size=7",
                        "locksmith.queues.digests.mode=transactional",
                        "locksmith.queues.digests.threads=1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(LocksmithWorkers.class).queues())
                            .containsExactly(
                                    Map.entry("digests", Mode.TRANSACTIONAL),
                                    Map.entry("emails", Mode.LEASED),
                                    Map.entry("reports", Mode.TRANSACTIONAL));
                    JobQueue queue = context.getBean(JobQueue.class);
                    DSLContext dsl = context.getBean(DSLContext.class);
                    Map<String, Set<String>> expected = new java.util.TreeMap<>();
                    for (String name : List.of("emails", "reports", "digests")) {
                        List<NewJob> jobs = new ArrayList<>();
                        for (int i = 0; i < perQueue; i++) {
                            jobs.add(NewJob.of(name, "k" + i));
                        }
                        Set<String> ids = new TreeSet<>();
                        dsl.transaction(c -> queue.enqueueAll(c.dsl(), jobs).forEach(id -> ids.add(id + " in tx")));
                        expected.put(name, ids);
                    }
                    assertThat(allHandled.await(60, TimeUnit.SECONDS))
                            .as("all handled")
                            .isTrue();
                    Map<String, Set<String>> actual = new java.util.TreeMap<>();
                    HANDLED.forEach((name, ids) -> {
                        actual.put(name, new TreeSet<>(ids));
                        assertThat(ids).as("each job of %s once", name).hasSize(perQueue);
                    });
                    assertThat(actual).isEqualTo(expected);
                    // completed jobs are deleted (JobQueueConfig.keepCompleted is false by default);
                    // completion commits after the handler returns, so wait for the rows to go
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    long left;
                    do {
                        left = dsl.fetchSingle(
                                        "SELECT count(*) FROM locksmith.jobs WHERE queue IN ('emails', 'reports', 'digests')")
                                .get(0, Long.class);
                    } while (left > 0 && System.nanoTime() < deadline);
                    assertThat(left)
                            .as("rows left: %s", dsl.fetch("SELECT id, queue, status FROM locksmith.jobs"))
                            .isZero();
                });
    }

    @Test
    void configuredConcurrencyAndRateLimitsAreWrittenBeforeTheWorkersStart() {
        HANDLED.clear();
        allHandled = new CountDownLatch(0);
        runner().withUserConfiguration(ThreeHandlers.class)
                .withPropertyValues(
                        "locksmith.queues.emails.concurrency-limit=4",
                        "locksmith.queues.emails.concurrency-limits.tenant-big=16",
                        "locksmith.queues.emails.concurrency-limits.[tenant.7]=2",
                        "locksmith.queues.emails.rate-limit.max-starts=100",
                        "locksmith.queues.emails.rate-limit.per=1m",
                        "locksmith.queues.emails.rate-limits.[partner.eu].max-starts=5",
                        "locksmith.queues.emails.rate-limits.[partner.eu].per=1s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    JobQueue queue = context.getBean(JobQueue.class);
                    DSLContext dsl = context.getBean(DSLContext.class);
                    ConcurrencyLimits.QueueLimits limits =
                            queue.concurrencyLimits().of(dsl, "emails");
                    assertThat(limits.defaultPerKey()).hasValue(4);
                    assertThat(limits.keys()).containsOnly(Map.entry("tenant-big", 16), Map.entry("tenant.7", 2));
                    assertThat(queue.concurrencyLimits().of(dsl, "reports").keys())
                            .isEmpty();
                    RateLimits.QueueRates rates = queue.rateLimits().of(dsl, "emails");
                    assertThat(rates.defaultPerKey()).contains(new RateLimits.Rate(100, Duration.ofMinutes(1)));
                    assertThat(rates.keys())
                            .containsOnly(Map.entry("partner.eu", new RateLimits.Rate(5, Duration.ofSeconds(1))));
                    queue.rateLimits().removeDefault(dsl, "emails");
                    queue.rateLimits().remove(dsl, "emails", "partner.eu");
                    queue.concurrencyLimits().removeDefault(dsl, "emails");
                    queue.concurrencyLimits().remove(dsl, "emails", "tenant-big");
                    queue.concurrencyLimits().remove(dsl, "emails", "tenant.7");
                });
    }

    static final ConcurrentLinkedQueue<Boolean> ON_VIRTUAL_THREADS = new ConcurrentLinkedQueue<>();
    static CountDownLatch virtualHandled;

    /**
     * Spring Boot's {@code spring.threads.virtual.enabled} puts the handlers on virtual threads
     * from Java 21 on; there the worker may ask for far more threads than Boot's pool of ten
     * connections, and bounds them by the pool rather than failing start-up. Before Java 21 the
     * switch changes nothing.
     */
    @Test
    void springsVirtualThreadsSwitchPutsHandlersOnVirtualThreadsFromJava21() {
        boolean java21 = Runtime.version().feature() >= 21;
        ON_VIRTUAL_THREADS.clear();
        virtualHandled = new CountDownLatch(5);
        runner().withUserConfiguration(VirtualHandler.class)
                .withPropertyValues(
                        "spring.threads.virtual.enabled=true", "locksmith.queues.virtual.threads=" + (java21 ? 200 : 2))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    JobQueue queue = context.getBean(JobQueue.class);
                    DSLContext dsl = context.getBean(DSLContext.class);
                    queue.enqueueAll(dsl, java.util.Collections.nCopies(5, NewJob.of("virtual", "k")));
                    assertThat(virtualHandled.await(60, TimeUnit.SECONDS))
                            .as("all handled")
                            .isTrue();
                    assertThat(ON_VIRTUAL_THREADS).hasSize(5).containsOnly(java21);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class VirtualHandler {
        @Bean
        @LocksmithHandler(queue = "virtual")
        JobHandler virtual() {
            return (job, tx) -> {
                ON_VIRTUAL_THREADS.add(
                        Thread.currentThread().getClass().getName().contains("Virtual"));
                virtualHandled.countDown();
            };
        }
    }

    static CountDownLatch slowStarted;

    @Test
    void closingTheContextGivesAnUnfinishedLeasedJobBack() throws Exception {
        slowStarted = new CountDownLatch(1);
        long[] id = new long[1];
        runner().withUserConfiguration(SlowHandler.class)
                .withPropertyValues("locksmith.queues.slow.threads=1", "locksmith.queues.slow.shutdown-grace=100ms")
                .run(context -> {
                    DSLContext dsl = context.getBean(DSLContext.class);
                    id[0] = context.getBean(JobQueue.class).enqueue(dsl, NewJob.of("slow", "stuck"));
                    assertThat(slowStarted.await(30, TimeUnit.SECONDS)).isTrue();
                    LocksmithWorkers workers = context.getBean(LocksmithWorkers.class);
                    ((ConfigurableApplicationContext) context.getSourceApplicationContext()).close();
                    assertThat(workers.isRunning()).isFalse();
                });
        Record row = org.jooq
                .impl
                .DSL
                .using(database.dataSource(), org.jooq.SQLDialect.POSTGRES)
                .fetchOne("SELECT status, attempts, locked_by FROM locksmith.jobs WHERE id = ?", id[0]);
        assertThat(row).isNotNull();
        assertThat(row.get(0, String.class)).isEqualTo("pending");
        assertThat(row.get(1, Integer.class)).isZero();
        assertThat(row.get(2, String.class)).isNull();
    }

    @Test
    void retentionDeletesJobsThatFinishedLongerAgoThanCompletedAfter() {
        runner().withPropertyValues("locksmith.retention.completed-after=1h", "locksmith.retention.batch-size=1")
                .run(context -> {
                    JobQueue queue = context.getBean(JobQueue.class);
                    DSLContext dsl = context.getBean(DSLContext.class);
                    long old = queue.enqueue(dsl, NewJob.of("retained", "old"));
                    long recent = queue.enqueue(dsl, NewJob.of("retained", "recent"));
                    long pending = queue.enqueue(dsl, NewJob.of("retained", "pending"));
                    dsl.transaction(c -> {
                        queue.cancel(c.dsl(), old);
                        queue.cancel(c.dsl(), recent);
                    });
                    // cancelled jobs are in the history
                    dsl.execute(
                            "UPDATE locksmith.job_history SET finished_at = now() - interval '2 hours' WHERE id = ?",
                            old);
                    // the workers' lifecycle started retention at once; restart it to run now, after the update
                    LocksmithWorkers workers = context.getBean(LocksmithWorkers.class);
                    workers.stop();
                    workers.start();
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    List<Long> left;
                    do {
                        left = dsl.fetch("SELECT id FROM locksmith.jobs WHERE queue = 'retained' UNION ALL "
                                        + "SELECT id FROM locksmith.job_history WHERE queue = 'retained' ORDER BY id")
                                .getValues(0, Long.class);
                    } while (left.contains(old) && System.nanoTime() < deadline);
                    assertThat(left).containsExactly(recent, pending);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class ThreeHandlers {
        @Bean
        EmailHandler emailHandler() {
            return new EmailHandler();
        }

        @Bean
        ReportMethods reportMethods() {
            return new ReportMethods();
        }
    }

    @Component
    @LocksmithHandler(queue = "emails")
    static class EmailHandler implements JobHandler {
        @Override
        public void handle(Job job, DSLContext tx) {
            handled("emails", job);
        }
    }

    static class ReportMethods {
        @LocksmithHandler(queue = "reports")
        void reports(List<Job> jobs, DSLContext tx) {
            jobs.forEach(job -> handled("reports", job));
        }

        @LocksmithHandler(queue = "digests")
        public void digest(Job job, DSLContext tx) {
            handled("digests", job);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class SlowHandler {
        @Bean
        @LocksmithHandler(queue = "slow")
        JobHandler slow() {
            return (job, tx) -> {
                slowStarted.countDown();
                new CountDownLatch(1).await(60, TimeUnit.SECONDS); // until the worker interrupts it
            };
        }
    }
}

package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.locksmith.Locksmith;
import dev.locksmith.codegen.tables.records.JobHistoryRecord;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.FailResult;
import dev.locksmith.jobs.JacksonJobCodec;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobCodec;
import dev.locksmith.jobs.JobHandlers;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobType;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.observe.JobEvent;
import dev.locksmith.observe.LocksmithObserver;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Typed jobs on real connections: payloads with dates and nested objects round-trip through
 * {@code jsonb} and the default Jackson codec; dispatch by kind; a job of an unknown kind or with a
 * payload that does not decode fails permanently with a readable {@code last_error}, while the
 * other jobs keep flowing, with both workers.
 */
class TypedJobsTest extends DatabaseTest {

    enum Tier {
        GOLD,
        SILVER
    }

    record Address(String city, List<String> lines) {}

    record Customer(String name, Tier tier, List<Address> addresses) {}

    record Order(
            String id,
            LocalDate due,
            Instant createdAt,
            OffsetDateTime promisedAt,
            BigDecimal amount,
            Customer customer,
            Map<String, Integer> quantities) {}

    record Ping(int n) {}

    static final JobType<Order> ORDER = JobType.of("typed", "order", Order.class);
    static final JobType<Ping> PING = JobType.of("typed", "ping", Ping.class);

    private JobQueue queue;

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_HISTORY).execute();
        dsl.execute("DROP TABLE IF EXISTS typed_results");
        dsl.execute("CREATE TABLE typed_results (job_id bigint NOT NULL, n int NOT NULL)");
        queue = new JobQueue(dsl);
    }

    static Order order(String id) {
        return new Order(
                id,
                LocalDate.of(2026, 2, 28),
                Instant.parse("2026-11-23T09:15:30.123456Z"),
                OffsetDateTime.of(2026, 12, 1, 8, 0, 0, 0, ZoneOffset.ofHours(-5)),
                new BigDecimal("1234.56"),
                new Customer(
                        "Zoë \"Z\" O'Brien",
                        Tier.GOLD,
                        List.of(new Address("Dublin", List.of("1 Main St", "Apt 2")), new Address("Cork", List.of()))),
                Map.of("widget", 3, "gadget", 1));
    }

    @Test
    void recordsWithDatesAndNestedObjectsRoundTripThroughJsonb() throws Exception {
        Order sent = order("A-1");
        long id = queue.enqueue(dsl, ORDER, sent);
        long ping =
                queue.enqueue(dsl, queue.newJob(PING, new Ping(7)).priority(5).build());
        // stored as jsonb that SQL can read
        assertThat(dsl.fetchValue("SELECT payload->'customer'->>'name' FROM locksmith.jobs WHERE id = ?", id))
                .isEqualTo("Zoë \"Z\" O'Brien");
        assertThat(dsl.fetchValue("SELECT payload->>'due' FROM locksmith.jobs WHERE id = ?", id))
                .isEqualTo("2026-02-28");
        assertThat(dsl.fetchSingle(JOBS, JOBS.ID.eq(ping)).getPriority()).isEqualTo((short) 5);

        Map<Long, Object> received = new ConcurrentHashMap<>();
        CountDownLatch both = new CountDownLatch(2);
        JobHandlers handlers = JobHandlers.builder()
                .on(ORDER, (job, order) -> {
                    received.put(job.id(), order);
                    both.countDown();
                })
                .on(PING, (job, p, tx) -> {
                    tx.execute("INSERT INTO typed_results VALUES (?, ?)", job.id(), p.n());
                    received.put(job.id(), p);
                    both.countDown();
                })
                .build();
        try (JobWorker worker =
                JobWorker.builder(pool, "typed", handlers).build().start()) {
            assertThat(both.await(30, TimeUnit.SECONDS)).as("both handled").isTrue();
        }
        assertThat(received.get(id)).isEqualTo(sent);
        assertThat(received.get(ping)).isEqualTo(new Ping(7));
        assertThat(dsl.fetchValue("SELECT n FROM typed_results WHERE job_id = ?", ping))
                .isEqualTo(7);
        assertThat(handlers.kinds()).containsExactlyInAnyOrder("order", "ping");
    }

    /** 40 good jobs around an unknown kind and two payloads that do not decode. */
    private List<Long> enqueueMixed(String queueName, List<Long> bad) {
        JobType<Ping> ping = PING.inQueue(queueName);
        List<Long> good = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            good.add(queue.enqueue(dsl, ping, new Ping(i)));
            if (i == 10) {
                bad.add(queue.enqueue(dsl, NewJob.of(queueName, "mystery")));
            }
            if (i == 20) {
                bad.add(queue.enqueue(
                        dsl,
                        NewJob.builder(queueName, "ping")
                                .payload("{\"n\": \"not-a-number\"}")
                                .build()));
            }
            if (i == 30) {
                bad.add(queue.enqueue(
                        dsl, NewJob.builder(queueName, "ping").payload("null").build()));
            }
        }
        return good;
    }

    private static JobHandlers pings(List<Long> handled) {
        return JobHandlers.builder()
                .on(PING, (job, p, tx) -> {
                    tx.execute("INSERT INTO typed_results VALUES (?, ?)", job.id(), p.n());
                    handled.add(job.id());
                })
                .build();
    }

    @Test
    void unknownKindsAndBadPayloadsFailPermanentlyWhileTheLeasedWorkerGoesOn() throws Exception {
        List<Long> bad = new ArrayList<>();
        List<Long> good = enqueueMixed("typed-leased", bad);
        List<Long> handled = new CopyOnWriteArrayList<>();
        CountDownLatch settled = new CountDownLatch(good.size() + bad.size());
        Map<Long, FailResult.Outcome> failures = new ConcurrentHashMap<>();
        WorkerEvents listener = new WorkerEvents() {
            @Override
            public void completed(Job job) {
                settled.countDown();
            }

            @Override
            public void failed(Job job, FailResult.Outcome outcome) {
                failures.put(job.id(), outcome);
                settled.countDown();
            }
        };
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(pool).observer(listener).build()),
                        "typed-leased",
                        pings(handled))
                .threads(4)
                .build()
                .start()) {
            assertThat(settled.await(30, TimeUnit.SECONDS))
                    .as("every job settled")
                    .isTrue();
        }
        assertThat(handled).containsExactlyInAnyOrderElementsOf(good);
        assertThat(failures)
                .hasSize(3)
                .allSatisfy((id, outcome) -> assertThat(outcome).isEqualTo(FailResult.Outcome.FAILED));
        assertBadJobsFailedReadably(bad);
    }

    @Test
    void unknownKindsAndBadPayloadsFailPermanentlyWhileTheTransactionalWorkerGoesOn() throws Exception {
        List<Long> bad = new ArrayList<>();
        List<Long> good = enqueueMixed("typed-tx", bad);
        List<Long> handled = new CopyOnWriteArrayList<>();
        // COMPLETED is reported after the batch commits, FAILED as the job is written back; closing
        // the worker then joins its threads, which commit their batch first
        CountDownLatch settled = new CountDownLatch(good.size() + bad.size());
        LocksmithObserver events = new LocksmithObserver() {
            @Override
            public void jobEvent(JobEvent event, Job job) {
                if (event == JobEvent.COMPLETED || event == JobEvent.FAILED) {
                    settled.countDown();
                }
            }
        };
        try (TransactionalWorker worker = TransactionalWorker.builder(
                        Locksmith.builder(dsl).observer(events).build().dsl(),
                        "typed-tx",
                        pings(handled).batched())
                .threads(2)
                .batchSize(10)
                .build()
                .start()) {
            assertThat(settled.await(30, TimeUnit.SECONDS))
                    .as("every job settled")
                    .isTrue();
        }
        List<Long> committed = dsl.fetch("SELECT job_id FROM typed_results").getValues(0, Long.class);
        assertThat(committed).as("each good job committed once").containsExactlyInAnyOrderElementsOf(good);
        assertThat(dsl.fetchCount(JOBS)).as("nothing left in jobs").isZero();
        assertThat(dsl.fetchCount(JOB_HISTORY))
                .as("only the bad jobs are kept, as failed")
                .isEqualTo(3);
        assertBadJobsFailedReadably(bad);
    }

    private void assertBadJobsFailedReadably(List<Long> bad) {
        JobHistoryRecord mystery = dsl.fetchSingle(JOB_HISTORY, JOB_HISTORY.ID.eq(bad.get(0)));
        assertThat(mystery.getStatus()).isEqualTo("failed");
        assertThat(mystery.getAttempts()).as("not retried").isEqualTo(1);
        assertThat(mystery.getLastError()).startsWith("no handler for kind 'mystery' (job " + bad.get(0));
        assertThat(mystery.getLastError()).contains("handles [ping]");

        JobHistoryRecord notANumber = dsl.fetchSingle(JOB_HISTORY, JOB_HISTORY.ID.eq(bad.get(1)));
        assertThat(notANumber.getStatus()).isEqualTo("failed");
        assertThat(notANumber.getAttempts()).isEqualTo(1);
        assertThat(notANumber.getLastError())
                .startsWith("java.lang.IllegalArgumentException: payload of job " + bad.get(1)
                        + " (kind ping) does not decode: not a " + Ping.class.getName() + ": ")
                .contains("not-a-number");

        JobHistoryRecord jsonNull = dsl.fetchSingle(JOB_HISTORY, JOB_HISTORY.ID.eq(bad.get(2)));
        assertThat(jsonNull.getStatus()).isEqualTo("failed");
        assertThat(jsonNull.getLastError()).contains("JSON null");
    }

    @Test
    void aCustomCodecEncodesAndDecodesBothEnds() throws Exception {
        JobCodec snakeCase = JacksonJobCodec.of(JsonMapper.builder()
                .addModule(new JavaTimeModule())
                .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                .build());
        record Invoice(String invoiceNumber, LocalDate issuedOn) {}
        JobType<Invoice> invoice = JobType.of("typed-codec", "invoice", Invoice.class);
        JobQueue snakeQueue =
                new JobQueue(dsl, JobQueueConfig.builder().codec(snakeCase).build());

        long id = snakeQueue.enqueue(dsl, invoice, new Invoice("INV-9", LocalDate.of(2026, 1, 2)));
        assertThat(dsl.fetchValue("SELECT payload->>'invoice_number' FROM locksmith.jobs WHERE id = ?", id))
                .isEqualTo("INV-9");

        List<Invoice> received = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        JobHandlers handlers = JobHandlers.builder()
                .codec(snakeCase)
                .on(invoice, (job, inv) -> {
                    received.add(inv);
                    done.countDown();
                })
                .build();
        try (JobWorker worker =
                JobWorker.builder(pool, "typed-codec", handlers).build().start()) {
            assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(received).containsExactly(new Invoice("INV-9", LocalDate.of(2026, 1, 2)));
    }

    /** A payload whose getter throws: Jackson cannot encode it. */
    record Unencodable(String value) {
        @Override
        public String value() {
            throw new IllegalStateException("no value");
        }
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void badInputIsRefusedAndNothingIsWritten() {
        assertThatThrownBy(() -> JobType.of(" ", "k", Ping.class))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("queue");
        assertThatThrownBy(() -> JobType.of("q", "k", int.class))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("primitive");
        assertThatThrownBy(() -> JobHandlers.builder()
                        .on(PING, (job, p) -> {})
                        .on(JobType.of("other", "ping", Order.class), (job, o) -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("kind 'ping' already has a handler");
        assertThatThrownBy(() -> JobHandlers.builder().build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no handlers");

        JobType raw = PING;
        assertThatThrownBy(() -> queue.enqueue(dsl, raw, "not a ping"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be a " + Ping.class.getName());
        JobType<Unencodable> unencodable = JobType.of("typed", "u", Unencodable.class);
        assertThatThrownBy(() -> queue.enqueue(dsl, unencodable, new Unencodable("x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("payload of kind u could not be encoded")
                .hasMessageContaining("no value");
        assertThat(dsl.fetchCount(JOBS)).as("nothing written").isZero();
    }
}

package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.Result;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;

/**
 * Shutdown with confirmations in flight loses none and sends none twice: the service is stopped
 * while handlers are inside their sends, the unfinished jobs go back to the queue, and a new
 * instance on the same database sends each of them exactly once.
 */
@OrderServiceTest
class GracefulShutdownTest {

    private static final int ORDERS = 12;
    /** Sends that complete before the first instance is stopped. */
    private static final int COMPLETED_FIRST = 4;
    /** locksmith.queues.confirmations.threads in application.properties: the sends in flight. */
    private static final int THREADS = 4;

    @Autowired
    PostgresServer server;

    @Test
    void confirmationsInFlightAtShutdownAreSentExactlyOnceAfterARestart() throws Exception {
        try (ScratchDatabases databases = server.scratch("locksmith_example_test")) {
            ScratchDatabase database = databases.create("restart");
            DSLContext db = DSL.using(database.dataSource(), SQLDialect.POSTGRES);

            // First instance: COMPLETED_FIRST sends go through, then every handler thread blocks in a send.
            BlockingSender blocking = new BlockingSender(COMPLETED_FIRST, THREADS);
            List<Long> orderIds = new ArrayList<>();
            try (ConfigurableApplicationContext first = start(database, blocking)) {
                TestRestTemplate http = http(first);
                for (int i = 0; i < ORDERS; i++) {
                    JsonNode placed = http.postForObject(
                            "/orders",
                            Map.of("customer", "customer-" + i, "amount", new BigDecimal("10.00")),
                            JsonNode.class);
                    orderIds.add(placed.path("order").path("id").asLong());
                }
                assertThat(blocking.inFlight.await(30, TimeUnit.SECONDS))
                        .as("every handler thread inside a send")
                        .isTrue();
            } // closed here: running sends are interrupted after the shutdown grace, their jobs given back

            assertThat(blocking.calls())
                    .as("sends started: the completed ones, and one blocked per handler thread")
                    .isEqualTo(COMPLETED_FIRST + THREADS);
            List<Long> confirmedFirst = confirmedOrders(db);
            assertThat(confirmedFirst).containsExactlyInAnyOrderElementsOf(blocking.completed());
            assertThat(confirmedFirst).hasSize(COMPLETED_FIRST);
            Result<Record> jobs = db.fetch(
                    "SELECT status::text, attempts, locked_by FROM locksmith.jobs WHERE queue = 'confirmations'");
            assertThat(jobs).hasSize(ORDERS - COMPLETED_FIRST);
            assertThat(jobs).allSatisfy(job -> {
                assertThat(job.get("status", String.class)).isEqualTo("pending");
                assertThat(job.get("attempts", Integer.class))
                        .as("an interrupted attempt is given back, not counted")
                        .isZero();
                assertThat(job.get("locked_by", String.class)).isNull();
            });

            // Second instance on the same database: it sends the rest, each once.
            RecordingConfirmationSender recording = new RecordingConfirmationSender();
            ConfigurableApplicationContext second = start(database, recording);
            try {
                recording.awaitSends(ORDERS - COMPLETED_FIRST, Eventually.DEADLINE);
                long left = Eventually.read(() -> confirmationJobs(db), n -> n == 0);
                assertThat(left).as("confirmation jobs left").isZero();
            } finally {
                second.close();
            }
            List<Long> rest = new ArrayList<>(orderIds);
            rest.removeAll(confirmedFirst);
            assertThat(recording.sent()).containsExactlyInAnyOrderElementsOf(rest);
            assertThat(confirmedOrders(db)).containsExactlyInAnyOrderElementsOf(orderIds);
        }
    }

    /**
     * The service on {@code database}, with {@code sender}. The settings are command-line
     * arguments, which win over application.properties (default properties would not).
     */
    private static ConfigurableApplicationContext start(ScratchDatabase database, ConfirmationSender sender) {
        List<String> args = new ArrayList<>(List.of(
                "--spring.datasource.url=" + database.jdbcUrl(),
                "--spring.datasource.username=" + database.user(),
                "--server.port=0",
                "--spring.main.banner-mode=off",
                "--locksmith.queues.confirmations.shutdown-grace=200ms"));
        if (database.password() != null) {
            args.add("--spring.datasource.password=" + database.password());
        }
        return new SpringApplicationBuilder(OrderServiceApplication.class)
                .initializers(context -> ((GenericApplicationContext) context)
                        .registerBean(
                                "testConfirmationSender",
                                ConfirmationSender.class,
                                () -> sender,
                                definition -> definition.setPrimary(true)))
                .run(args.toArray(String[]::new));
    }

    private static TestRestTemplate http(ConfigurableApplicationContext context) {
        TestRestTemplate http = new TestRestTemplate();
        http.setUriTemplateHandler(new org.springframework.web.util.DefaultUriBuilderFactory(
                "http://localhost:" + context.getEnvironment().getProperty("local.server.port")));
        return http;
    }

    private static List<Long> confirmedOrders(DSLContext db) {
        return db.fetch("SELECT order_id FROM sent_confirmations ORDER BY order_id")
                .getValues(0, Long.class);
    }

    private static long confirmationJobs(DSLContext db) {
        return db.fetchSingle("SELECT count(*) FROM locksmith.jobs WHERE queue = 'confirmations'")
                .get(0, Long.class);
    }

    /** Lets the first sends through, then blocks every further send until the worker interrupts it. */
    static final class BlockingSender implements ConfirmationSender {

        private final int passing;
        private final AtomicInteger calls = new AtomicInteger();
        private final List<Long> completed = new ArrayList<>();
        final CountDownLatch inFlight;

        BlockingSender(int passing, int blocking) {
            this.passing = passing;
            this.inFlight = new CountDownLatch(blocking);
        }

        @Override
        public void send(Order order) throws InterruptedException {
            if (calls.incrementAndGet() > passing) {
                inFlight.countDown();
                // until interrupted by the worker's shutdown
                if (!new CountDownLatch(1).await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never interrupted");
                }
            }
            synchronized (this) {
                completed.add(order.id());
            }
        }

        int calls() {
            return calls.get();
        }

        synchronized List<Long> completed() {
            return List.copyOf(completed);
        }
    }
}

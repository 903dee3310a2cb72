package dev.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.provisioning.ScratchDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A job enqueued by {@code @Transactional} service code (Boot's transaction management, a CGLIB
 * proxy) commits with the service's transaction, or not at all, and wakes workers once that
 * transaction committed (an after-commit synchronization; NotifyCarryingTest shows when the
 * transaction carries the NOTIFY itself). The getters go
 * through the proxy to the service's own fields.
 */
class TransactionParticipationTest {

    @Test
    void anEnqueueCommitsWithTheServicesTransactionAndRollsBackWithIt() {
        ScratchDatabase database = TestDatabases.migrated("transactional");
        TestDatabases.runner(database)
                .withPropertyValues("locksmith.schema.migrate=false")
                .withUserConfiguration(Services.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    OrderService orders = context.getBean(OrderService.class);
                    DSLContext dsl = context.getBean(DSLContext.class);

                    long committed;
                    try (Connection listener = database.dataSource().getConnection()) {
                        try (Statement statement = listener.createStatement()) {
                            statement.execute("LISTEN " + JobQueue.CHANNEL);
                        }
                        committed = orders.place(42, false);
                        assertThat(woken(listener))
                                .as("workers woken after the commit")
                                .contains("emails");
                    }
                    assertThat(orders.transactionWasActive()).isTrue();
                    assertThat(orders.synchronizationsAddedByEnqueue())
                            .as("the wake-up waits for Spring's commit (or, carried, for its outcome)")
                            .isEqualTo(1);
                    assertThat(dsl.fetchValue("SELECT count(*) FROM orders WHERE id = 42"))
                            .isEqualTo(1L);
                    assertThat(dsl.fetchValue("SELECT payload->>'order' FROM locksmith.jobs WHERE id = ?", committed))
                            .isEqualTo("42");

                    assertThatThrownBy(() -> orders.place(43, true))
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessage("payment declined after enqueue of job " + orders.lastJobId());
                    long rolledBack = orders.lastJobId();
                    assertThat(rolledBack).isGreaterThan(committed);
                    assertThat(dsl.fetchValue("SELECT count(*) FROM orders WHERE id = 43"))
                            .isEqualTo(0L);
                    assertThat(dsl.fetchValue("SELECT count(*) FROM locksmith.jobs WHERE id = ?", rolledBack))
                            .isEqualTo(0L);
                    assertThat(dsl.fetchValue("SELECT count(*) FROM locksmith.jobs"))
                            .isEqualTo(1L);
                });
    }

    private static List<String> woken(Connection listener) throws Exception {
        List<String> queues = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (queues.isEmpty() && System.nanoTime() < deadline) {
            PGNotification[] received = listener.unwrap(PGConnection.class).getNotifications(100);
            if (received != null) {
                Arrays.stream(received).map(PGNotification::getParameter).forEach(queues::add);
            }
        }
        return queues;
    }

    @Configuration(proxyBeanMethods = false)
    static class Services {
        @Bean
        OrderService orderService(DSLContext dsl, JobQueue queue) {
            dsl.execute("CREATE TABLE orders (id bigint PRIMARY KEY)");
            return new OrderService(dsl, queue);
        }
    }

    static class OrderService {
        private final DSLContext dsl;
        private final JobQueue queue;
        volatile boolean transactionWasActive;
        volatile long lastJobId;
        volatile int synchronizationsAddedByEnqueue;

        OrderService(DSLContext dsl, JobQueue queue) {
            this.dsl = dsl;
            this.queue = queue;
        }

        public boolean transactionWasActive() {
            return transactionWasActive;
        }

        public long lastJobId() {
            return lastJobId;
        }

        public int synchronizationsAddedByEnqueue() {
            return synchronizationsAddedByEnqueue;
        }

        /** Writes the order and enqueues its confirmation with Boot's DSLContext; then maybe fails. */
        @Transactional
        public long place(long order, boolean fail) {
            transactionWasActive = TransactionSynchronizationManager.isActualTransactionActive();
            dsl.execute("INSERT INTO orders (id) VALUES (?)", order);
            int before = TransactionSynchronizationManager.getSynchronizations().size();
            lastJobId = queue.enqueue(
                    dsl,
                    NewJob.builder("emails", "order-confirmation")
                            .payload("{\"order\": " + order + "}")
                            .build());
            synchronizationsAddedByEnqueue =
                    TransactionSynchronizationManager.getSynchronizations().size() - before;
            if (fail) {
                throw new IllegalStateException("payment declined after enqueue of job " + lastJobId);
            }
            return lastJobId;
        }
    }
}

package dev.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.provisioning.ScratchDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * In a Spring-managed local transaction (Boot's {@code DataSourceTransactionManager}) one enqueue
 * at a time sends the workers' {@code NOTIFY} inside the transaction itself, as it does in a jOOQ
 * transaction, instead of leaving it to a separate notification after the commit; where a
 * transaction manager may not be a local one (a JTA one would prepare, and PostgreSQL refuses to
 * prepare a transaction that sent {@code NOTIFY}) it never does.
 *
 * <p>Which session sent a notification is its backend pid. The enqueues run in Spring transactions
 * on Boot's {@code DSLContext} and pool; the queue's own connections (where the separate
 * notification goes) come from another, non-pooled data source, so that a notification sent
 * after the commit never comes from the producer's session.
 */
class NotifyCarryingTest {

    private static final Duration WAIT = Duration.ofMinutes(1);

    private static ApplicationContextRunner runner(ScratchDatabase database) {
        return TestDatabases.runner(database).withPropertyValues("locksmith.schema.migrate=false");
    }

    @Test
    void anEnqueueInALocalSpringTransactionCarriesTheNotifyInsideIt() {
        ScratchDatabase database = TestDatabases.migrated("carried");
        runner(database).run(context -> {
            assertThat(context).hasNotFailed();
            Producer producer = new Producer(context, database);
            try (Listener listener = new Listener(database.dataSource())) {
                // No producer carries within 2 ms of the last notification: tries until one does.
                long deadline = System.nanoTime() + WAIT.toNanos();
                for (int attempt = 0; ; attempt++) {
                    String queue = "carried-" + attempt;
                    int session = producer.enqueue(queue);
                    if (listener.next(queue).getPID() == session) {
                        break;
                    }
                    assertThat(System.nanoTime())
                            .as("no enqueue in a Spring transaction sent the NOTIFY in its own transaction")
                            .isLessThan(deadline);
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
            }
        });
    }

    @Test
    void underATransactionManagerThatMayNotBeLocalNoEnqueueCarriesTheNotify() {
        ScratchDatabase database = TestDatabases.migrated("not-carried");
        runner(database).withUserConfiguration(OpaqueTransactions.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(PlatformTransactionManager.class)).isInstanceOf(Opaque.class);
            Producer producer = new Producer(context, database);
            try (Listener listener = new Listener(database.dataSource())) {
                for (int attempt = 0; attempt < 20; attempt++) {
                    String queue = "not-carried-" + attempt;
                    int session = producer.enqueue(queue);
                    assertThat(listener.next(queue).getPID())
                            .as("attempt %d: the wake-up came from the producer's own transaction", attempt)
                            .isNotEqualTo(session);
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
            }
            assertThat(context.getBean(DSLContext.class).fetchValue("SELECT count(*) FROM locksmith.jobs"))
                    .isEqualTo(20L);
        });
    }

    @Test
    void theHookArrangesOnlyOnTheTransactionsOwnConnectionAndTellsHowItEnded() {
        runner(TestDatabases.migrated("hook")).run(context -> {
            assertThat(context).hasNotFailed();
            DSLContext dsl = context.getBean(DSLContext.class);
            TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            SpringCommitHook hook = SpringCommitHook.of(context.getBeanFactory());
            AtomicInteger committed = new AtomicInteger();
            AtomicInteger otherwise = new AtomicInteger();

            assertThat(hook.afterOnePhaseCommit(c -> true, committed::incrementAndGet, otherwise::incrementAndGet))
                    .as("outside a transaction")
                    .isFalse();
            for (boolean rollBack : new boolean[] {false, true}) {
                tx.executeWithoutResult(status -> {
                    int session = pid(dsl);
                    Predicate<Connection> other = c -> pid(c) != session;
                    assertThat(hook.afterOnePhaseCommit(other, committed::incrementAndGet, otherwise::incrementAndGet))
                            .as("an enqueue on another connection")
                            .isFalse();
                    assertThat(new SpringCommitHook()
                                    .afterOnePhaseCommit(
                                            c -> true, committed::incrementAndGet, otherwise::incrementAndGet))
                            .as("a hook that does not know transactions are local")
                            .isFalse();
                    Predicate<Connection> own = c -> pid(c) == session;
                    assertThat(hook.afterOnePhaseCommit(own, committed::incrementAndGet, otherwise::incrementAndGet))
                            .isTrue();
                    if (rollBack) {
                        status.setRollbackOnly();
                    }
                });
            }
            assertThat(committed).hasValue(1);
            assertThat(otherwise).as("after the rollback").hasValue(1);
        });
    }

    /**
     * A transaction manager that is no autowiring candidate still counts: the hook looks at every
     * bean of the type, and with one that may not be local beside Boot's local one it lets no
     * enqueue carry the NOTIFY, even in a transaction of the local one.
     */
    @Test
    void aTransactionManagerThatIsNoAutowiringCandidateStillCounts() {
        runner(TestDatabases.migrated("hidden"))
                .withUserConfiguration(HiddenOpaqueTransactions.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    // Boot's own (local) one beside it, the one a transaction is run by
                    assertThat(context.getBeanNamesForType(PlatformTransactionManager.class))
                            .containsExactlyInAnyOrder("opaque", "transactionManager");
                    TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
                    SpringCommitHook hook = SpringCommitHook.of(context.getBeanFactory());
                    AtomicInteger arranged = new AtomicInteger();
                    tx.executeWithoutResult(status -> {
                        assertThat(hook.afterOnePhaseCommit(
                                        c -> true, arranged::incrementAndGet, arranged::incrementAndGet))
                                .isFalse();
                        assertThat(SpringCommitHook.localTransactions()
                                        .afterOnePhaseCommit(
                                                c -> true, arranged::incrementAndGet, arranged::incrementAndGet))
                                .as("the same transaction, to a hook told transactions are local")
                                .isTrue();
                    });
                    assertThat(arranged).hasValue(1);
                });
    }

    /**
     * Enqueues in a Spring transaction of the context's transaction manager, on Boot's
     * DSLContext, to a queue whose own connections come from {@code database}'s non-pooled data
     * source, with the commit hook the starter makes.
     */
    private static final class Producer {
        final DSLContext dsl;
        final JobQueue queue;
        final TransactionTemplate tx;

        Producer(AssertableApplicationContext context, ScratchDatabase database) {
            dsl = context.getBean(DSLContext.class);
            queue = new JobQueue(Locksmith.builder(database.dataSource())
                    .commitHook(SpringCommitHook.of(context.getBeanFactory()))
                    .build());
            tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
        }

        /** Enqueues a job of {@code name}; returns the backend pid of the transaction's session. */
        int enqueue(String name) {
            Integer session = tx.execute(status -> {
                int pid = pid(dsl);
                queue.enqueue(dsl, NewJob.of(name, "k"));
                return pid;
            });
            return session == null ? -1 : session;
        }
    }

    private static int pid(DSLContext dsl) {
        return dsl.fetchSingle("SELECT pg_backend_pid()").get(0, Integer.class);
    }

    private static int pid(Connection connection) {
        try (Statement s = connection.createStatement();
                ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
            r.next();
            return r.getInt(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A session LISTENing on the queue's channel. */
    private static final class Listener implements AutoCloseable {
        final Connection connection;
        final List<PGNotification> received = new ArrayList<>();

        Listener(DataSource dataSource) throws SQLException {
            connection = dataSource.getConnection();
            try (Statement s = connection.createStatement()) {
                s.execute("LISTEN " + JobQueue.CHANNEL);
            }
        }

        /** Waits for a notification naming {@code queue}. */
        PGNotification next(String queue) throws SQLException {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < deadline) {
                for (PGNotification n : received) {
                    if (n.getParameter().equals(queue)) {
                        return n;
                    }
                }
                PGNotification[] more = connection.unwrap(PGConnection.class).getNotifications(100);
                if (more != null) {
                    received.addAll(List.of(more));
                }
            }
            throw new AssertionError("no notification for " + queue + " within " + WAIT);
        }

        @Override
        public void close() throws SQLException {
            try (Statement s = connection.createStatement()) {
                s.execute("UNLISTEN *");
            }
            connection.close();
        }
    }

    /** A transaction manager that is not a {@code ResourceTransactionManager}, as JTA's is not. */
    @Configuration(proxyBeanMethods = false)
    static class OpaqueTransactions {
        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new Opaque(new DataSourceTransactionManager(dataSource));
        }
    }

    /** {@link Opaque}, as a bean that is no autowiring candidate. */
    @Configuration(proxyBeanMethods = false)
    static class HiddenOpaqueTransactions {
        @Bean(autowireCandidate = false)
        PlatformTransactionManager opaque(DataSource dataSource) {
            return new Opaque(new DataSourceTransactionManager(dataSource));
        }
    }

    /** Runs its transactions by a local manager it does not say it is. */
    static final class Opaque implements PlatformTransactionManager {
        private final PlatformTransactionManager local;

        Opaque(PlatformTransactionManager local) {
            this.local = local;
        }

        @Override
        public TransactionStatus getTransaction(TransactionDefinition definition) {
            return local.getTransaction(definition);
        }

        @Override
        public void commit(TransactionStatus status) {
            local.commit(status);
        }

        @Override
        public void rollback(TransactionStatus status) {
            local.rollback(status);
        }
    }
}

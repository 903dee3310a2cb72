package dev.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.jobs.BatchJobHandler;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobHandler;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Wrong settings fail start-up with a message naming the property or the handler. No database:
 * everything here fails before a connection is opened.
 */
class BindingValidationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LocksmithAutoConfiguration.class))
            .withUserConfiguration(NoDatabase.class)
            .withPropertyValues("locksmith.schema.migrate=false");

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "locksmith.queues.emails.threads=-1 | locksmith.queues.emails.threads must be between 1 and 1000, was -1",
                "locksmith.queues.emails.batch-size=10001 | locksmith.queues.emails.batch-size must be between 1 and 10000, was 10001",
                "locksmith.queues.emails.lease=0s | locksmith.queues.emails.lease must be positive, was PT0S",
                "locksmith.queues.emails.poll-interval=-1s | locksmith.queues.emails.poll-interval must be positive, was PT-1S",
                "locksmith.queues.emails.prefetch=1001 | locksmith.queues.emails.prefetch must be between 0 and 1000, was 1001",
                "locksmith.queues.emails.claimers=9 | locksmith.queues.emails.claimers must be between 1 and 8, was 9",
                "locksmith.queues.emails.completion-linger=2s | locksmith.queues.emails.completion-linger must be between 0 and 1s, was PT2S",
                "locksmith.queues.emails.concurrency-limit=0 | locksmith.queues.emails.concurrency-limit must be between 1 and 10000, was 0",
                "locksmith.queues.emails.concurrency-limits.tenant-7=10001 | locksmith.queues.emails.concurrency-limits.tenant-7 must be between 1 and 10000, was 10001",
                "locksmith.queues.emails.rate-limit.max-starts=0 | locksmith.queues.emails.rate-limit needs both max-starts and per, was max-starts=0 per=null",
                "locksmith.queues.emails.rate-limits.p.per=2d | locksmith.queues.emails.rate-limits.p needs both max-starts and per, was max-starts=null per=PT48H",
                "locksmith.queues.emails.rate-limits.[ ].max-starts=1 | locksmith.queues.emails.rate-limits: a key must be 1 to 256 characters and not blank, was ' '",
                "locksmith.queues.emails.vacuum-interval=500ms | locksmith.queues.emails.vacuum-interval must be 0s (off) or between 1s and 1h, was PT0.5S",
                "locksmith.schema.name=Billing | locksmith.schema.name: schema must be a lower-case unquoted identifier ([a-z_][a-z0-9_]*), was 'Billing'",
                "locksmith.schema.name=select | locksmith.schema.name: schema 'select' is a reserved word in PostgreSQL",
                "locksmith.retention.batch-size=0 | locksmith.retention.batch-size must be between 1 and 100000, was 0",
                "locksmith.retention.completed-after=-1d | locksmith.retention.completed-after must not be negative, was PT-24H",
                "locksmith.audit.probe-delay=0ms | locksmith.audit.probe-delay must be positive, was PT0S",
                "locksmith.health.depth-cap=0 | locksmith.health.depth-cap must be between 1 and 1000000, was 0",
                "locksmith.health.max-pending=20000 | locksmith.health.max-pending must not exceed locksmith.health.depth-cap (10000), since pending jobs are counted only up to it; was 20000",
                "locksmith.horizon.warn-after=500ms | locksmith.horizon.warn-after must be 0s (off) or between 1s and 1d, was PT0.5S",
                "locksmith.metrics.limit-keys-per-queue=101 | locksmith.metrics.limit-keys-per-queue must be between 0 and 100, was 101",
                "locksmith.metrics.limit-keys-per-queue=-1 | locksmith.metrics.limit-keys-per-queue must be between 0 and 100, was -1",
            })
    void aWrongValueFailsStartUpNamingTheProperty(String property, String message) {
        runner.withPropertyValues(property)
                .run(context ->
                        assertThat(messages(context.getStartupFailure())).contains(message));
    }

    @Test
    void aQueueKeyThatIsNoQueueNameFailsStartUp() {
        runner.withPropertyValues("locksmith.queues[ ].threads=2")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains(
                                "locksmith.queues. : a queue name must be 1 to 128 characters and not blank, was ' '"));
    }

    @Test
    void aHandlerWithABlankQueueFailsStartUp() {
        runner.withUserConfiguration(BlankQueue.class)
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("@LocksmithHandler(queue) on bean 'blank': a queue name must be 1 to 128 characters "
                                + "and not blank, was ' '"));
    }

    @Test
    void twoHandlersOfOneQueueFailStartUp() {
        runner.withUserConfiguration(TwoForOneQueue.class)
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("queue 'emails' has two @LocksmithHandler: bean 'first' and method "
                                + "Methods.second of bean 'methods'; one queue has one handler"));
    }

    @Test
    void aBatchHandlerInLeasedModeFailsStartUp() {
        runner.withUserConfiguration(Batch.class)
                .withPropertyValues("locksmith.queues.reports.mode=leased")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("locksmith.queues.reports.mode is leased, but the handler of queue 'reports' "
                                + "(bean 'reports') handles batches, which run in transactional mode only: set it to "
                                + "transactional, or take one Job"));
    }

    @Test
    void aHandlerMethodOfAnotherSignatureFailsStartUp() {
        runner.withUserConfiguration(WrongSignature.class)
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("method WrongMethod.handle of bean 'wrongMethod' is annotated "
                                + "@LocksmithHandler(queue = \"emails\") but takes (1 parameters: "
                                + "[dev.locksmith.jobs.Job]); a handler method takes (Job, DSLContext) or "
                                + "(List<Job>, DSLContext)"));
    }

    @Test
    void anAnnotatedBeanThatIsNoHandlerFailsStartUp() {
        runner.withUserConfiguration(NotAHandler.class)
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("bean 'notAHandler' (java.lang.String) is annotated @LocksmithHandler(queue = "
                                + "\"emails\") but is neither a JobHandler nor a BatchJobHandler; or annotate a method "
                                + "taking (Job, DSLContext) or (List<Job>, DSLContext)"));
    }

    @Test
    void aWorkerNeedingMoreConnectionsThanThePoolFailsStartUp() {
        runner.withUserConfiguration(OneHandler.class)
                .withPropertyValues("locksmith.queues.emails.threads=8")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("locksmith.queues.emails: a leased worker with 8 threads and LISTEN needs 12 "
                                + "connections at the same time, but the data source allows at most 10 "
                                + "(spring.datasource.hikari.maximum-pool-size with HikariCP): lower "
                                + "locksmith.queues.emails.threads or enlarge the pool"));
    }

    /** Every message of the failure's cause chain. */
    private static List<String> messages(Throwable failure) {
        assertThat(failure).as("start-up failed").isNotNull();
        List<String> messages = new ArrayList<>();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            messages.add(t.getMessage());
        }
        return messages;
    }

    @Configuration(proxyBeanMethods = false)
    static class NoDatabase {
        /** Never connected to: everything here fails first. */
        @Bean
        DataSource dataSource() {
            TenConnections dataSource = new TenConnections();
            dataSource.setServerNames(new String[] {"127.0.0.1"});
            dataSource.setPortNumbers(new int[] {9});
            return dataSource;
        }

        @Bean
        DSLContext dsl(DataSource dataSource) {
            return DSL.using(dataSource, SQLDialect.POSTGRES);
        }
    }

    /** Reports a pool maximum as HikariCP does, without being one. */
    public static class TenConnections extends PGSimpleDataSource {
        private static final long serialVersionUID = 1L;

        public int getMaximumPoolSize() {
            return 10;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OneHandler {
        @Bean
        @LocksmithHandler(queue = "emails")
        JobHandler emails() {
            return (job, tx) -> {};
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BlankQueue {
        @Bean
        @LocksmithHandler(queue = " ")
        JobHandler blank() {
            return (job, tx) -> {};
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoForOneQueue {
        @Bean
        @LocksmithHandler(queue = "emails")
        JobHandler first() {
            return (job, tx) -> {};
        }

        @Bean
        Methods methods() {
            return new Methods();
        }
    }

    static class Methods {
        @LocksmithHandler(queue = "emails")
        void second(Job job, DSLContext tx) {}
    }

    @Configuration(proxyBeanMethods = false)
    static class Batch {
        @Bean
        @LocksmithHandler(queue = "reports")
        BatchJobHandler reports() {
            return (jobs, tx) -> {};
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class WrongSignature {
        @Bean
        WrongMethod wrongMethod() {
            return new WrongMethod();
        }
    }

    static class WrongMethod {
        @LocksmithHandler(queue = "emails")
        void handle(Job job) {}
    }

    @Configuration(proxyBeanMethods = false)
    static class NotAHandler {
        @Bean
        @LocksmithHandler(queue = "emails")
        String notAHandler() {
            return "no";
        }
    }
}

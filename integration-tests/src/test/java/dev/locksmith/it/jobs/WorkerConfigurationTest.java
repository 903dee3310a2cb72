package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.WorkerEvents;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Workers built from the user's DSLContext run their transactions with the user's configuration. */
class WorkerConfigurationTest extends DatabaseTest {

    private final List<String> seen = new CopyOnWriteArrayList<>();
    private DSLContext users;

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        seen.clear();
        ExecuteListener recording = new ExecuteListener() {
            @Override
            public void executeStart(ExecuteContext ctx) {
                seen.add(ctx.sql());
            }
        };
        users = DSL.using(
                new DefaultConfiguration().set(pool).set(SQLDialect.POSTGRES).set(recording));
    }

    @Test
    void aJobWorkerRunsTheHandlersTransactionWithTheUsersListeners() throws Exception {
        long id = new JobQueue(dsl).enqueue(dsl, NewJob.of("configured", "k"));
        CountDownLatch done = new CountDownLatch(1);
        try (JobWorker worker = JobWorker.builder(
                        new JobQueue(Locksmith.builder(users)
                                .observer(new WorkerEvents() {
                                    @Override
                                    public void completed(Job job) {
                                        done.countDown();
                                    }
                                })
                                .build()),
                        "configured",
                        (job, tx) -> tx.execute("SELECT 'handled by the user''s listener'"))
                .threads(1)
                .listen(false)
                .pollInterval(Duration.ofMillis(20))
                .build()
                .start()) {
            assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(seen).contains("SELECT 'handled by the user''s listener'");
        assertThat(new JobQueue(dsl).find(dsl, id)).isEmpty();
    }

    @Test
    void aTransactionalWorkerDoesTooAndAContextWithoutADataSourceIsRefused() throws Exception {
        new JobQueue(dsl).enqueue(dsl, NewJob.of("configured-tx", "k"));
        CountDownLatch done = new CountDownLatch(1);
        try (TransactionalWorker worker = TransactionalWorker.builder(users, "configured-tx", (jobs, tx) -> {
                    tx.execute("SELECT 'batch seen by the user''s listener'");
                    done.countDown();
                })
                .threads(1)
                .listen(false)
                .pollInterval(Duration.ofMillis(20))
                .build()
                .start()) {
            assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(seen).contains("SELECT 'batch seen by the user''s listener'");

        try (var connection = DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password())) {
            DSLContext oneConnection = DSL.using(connection, SQLDialect.POSTGRES);
            assertThatThrownBy(() -> JobWorker.builder(oneConnection, "q", (job, tx) -> {}))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("DataSourceConnectionProvider");
        }
    }
}

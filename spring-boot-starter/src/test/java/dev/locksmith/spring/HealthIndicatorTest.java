package dev.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.provisioning.ScratchDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;

/** The locksmith health indicator: UP, OUT_OF_SERVICE past a threshold or with no idle account, DOWN without a database. */
class HealthIndicatorTest {

    @Test
    void statusFollowsTheQueuesThePoolAndTheDatabase() {
        ScratchDatabase database = TestDatabases.migrated("health");
        TestDatabases.runner(database)
                .withPropertyValues(
                        "locksmith.schema.migrate=false",
                        "locksmith.workers.enabled=false",
                        "locksmith.queues.mail.threads=1",
                        "locksmith.health.max-pending=2",
                        "locksmith.health.max-oldest-pending-age=1h")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LocksmithHealthIndicator indicator = context.getBean(LocksmithHealthIndicator.class);
                    DSLContext dsl = context.getBean(DSLContext.class);
                    JobQueue queue = context.getBean(JobQueue.class);
                    ChannelAccountPool pool = context.getBean(ChannelAccountPool.class);

                    Health empty = indicator.health();
                    assertThat(empty.getStatus()).isEqualTo(Status.UP);
                    assertThat(empty.getDetails())
                            .containsExactly(
                                    Map.entry(
                                            "queues",
                                            Map.of(
                                                    "mail",
                                                    Map.of("pending", 0L, "running", 0L, "oldestPendingAge", "none"))),
                                    Map.entry("pool", Map.of("total", 0L, "idle", 0L, "leased", 0L, "expired", 0L)),
                                    Map.entry("horizon", "none"),
                                    Map.entry("problems", List.of()));

                    for (int i = 0; i < 3; i++) {
                        queue.enqueue(
                                dsl,
                                NewJob.builder("mail", "m")
                                        .delay(Duration.ofHours(1))
                                        .build());
                    }
                    Health backlog = indicator.health();
                    assertThat(backlog.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
                    assertThat(backlog.getDetails().get("problems"))
                            .isEqualTo(
                                    List.of("queue mail: 3 pending jobs, more than locksmith.health.max-pending (2)"));

                    // one job due for two hours: too old as well
                    dsl.execute("UPDATE locksmith.jobs SET run_at = now() - interval '2 hours' WHERE id = "
                            + "(SELECT min(id) FROM locksmith.jobs)");
                    Health old = indicator.health();
                    @SuppressWarnings("unchecked")
                    List<String> problems = (List<String>) old.getDetails().get("problems");
                    assertThat(problems).hasSize(2);
                    assertThat(problems.get(1))
                            .matches(
                                    "queue mail: the oldest due pending job has waited PT2H0?\\.?[0-9]*S?, longer than "
                                            + "locksmith\\.health\\.max-oldest-pending-age \\(PT1H\\)");

                    dsl.execute("DELETE FROM locksmith.jobs");
                    pool.register(dsl, List.of("GA1"));
                    assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
                    assertThat(pool.acquire(Duration.ofMinutes(5), "test")).isPresent();
                    Health exhausted = indicator.health();
                    assertThat(exhausted.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
                    assertThat(exhausted.getDetails().get("pool"))
                            .isEqualTo(Map.of("total", 1L, "idle", 0L, "leased", 1L, "expired", 0L));
                    assertThat(exhausted.getDetails().get("problems"))
                            .isEqualTo(List.of("pool: all 1 channel accounts are leased, none is idle"));

                    context.getBean(HikariDataSource.class).close();
                    Health down = indicator.health();
                    assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(down.getDetails()).containsKey("error");
                });
    }

    @Test
    void theOldestHolderOfTheHorizonIsADetailAndTheStatusStaysUp() {
        ScratchDatabase database = TestDatabases.migrated("health_horizon");
        TestDatabases.runner(database)
                .withPropertyValues("locksmith.schema.migrate=false", "locksmith.workers.enabled=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LocksmithHealthIndicator indicator = context.getBean(LocksmithHealthIndicator.class);
                    try (Connection held = context.getBean(DataSource.class).getConnection()) {
                        held.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                        held.setAutoCommit(false);
                        int pid;
                        try (Statement s = held.createStatement();
                                ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
                            r.next();
                            pid = r.getInt(1);
                        }
                        Health health = indicator.health();
                        assertThat(health.getStatus()).isEqualTo(Status.UP);
                        assertThat(health.getDetails().get("horizon")).isInstanceOfSatisfying(Map.class, detail -> {
                            assertThat(detail.get("kind")).isEqualTo("BACKEND");
                            assertThat((String) detail.get("holder")).startsWith("session pid " + pid + " ");
                            assertThat((String) detail.get("heldFor")).startsWith("PT");
                            assertThat(detail.get("holders")).isEqualTo(1);
                        });
                        held.rollback();
                    }
                });
    }
}

package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultExecuteListenerProvider;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The enqueue statement: one {@code INSERT ... FROM unnest(arrays)} per call, NOTIFY included,
 * every column of every job where it belongs, and unique keys still race-free.
 */
class EnqueueStatementTest extends DatabaseTest {

    private final AtomicInteger statements = new AtomicInteger();
    private DSLContext counted;
    private JobQueue queue;

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
        ExecuteListener counter = new ExecuteListener() {
            private static final long serialVersionUID = 1L;

            @Override
            public void executeStart(ExecuteContext ctx) {
                statements.incrementAndGet();
            }
        };
        counted = DSL.using(dsl.configuration().derive(new DefaultExecuteListenerProvider(counter)));
        queue = new JobQueue(counted);
        // A queue reads the jobs table's layout (plain, or distributed by Citus) once, at its
        // first claim or enqueue: the counts below are of the calls after that one.
        counted.transaction(c -> queue.claimInTransaction(c.dsl(), dev.locksmith.jobs.Claim.of("warm-up", 1)));
    }

    @Test
    void oneJobIsOneStatementAndListenersAreNotifiedOnCommit() throws Exception {
        try (Connection listener = pool.getConnection()) {
            try (Statement s = listener.createStatement()) {
                s.execute("LISTEN " + JobQueue.CHANNEL);
            }
            statements.set(0);
            long id = queue.enqueue(counted, NewJob.of("notified", "k"));
            assertThat(statements.get()).as("statements sent for one enqueue").isEqualTo(1);
            assertThat(dsl.fetchValue(DSL.select(JOBS.QUEUE).from(JOBS).where(JOBS.ID.eq(id))))
                    .isEqualTo("notified");
            List<String> payloads = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (payloads.isEmpty() && System.nanoTime() < deadline) {
                PGNotification[] received = listener.unwrap(PGConnection.class).getNotifications(100);
                if (received != null) {
                    Arrays.stream(received).map(PGNotification::getParameter).forEach(payloads::add);
                }
            }
            assertThat(payloads).containsExactly("notified");
        }
    }

    @Test
    void manyJobsAreOneStatementWithEveryFieldInPlace() {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 2500; i++) {
            NewJob.Builder b = NewJob.builder(i % 2 == 0 ? "even" : "odd", "kind-" + i)
                    .payload("{\"n\": " + i + "}")
                    .priority(i % 7)
                    .maxAttempts(1 + i % 5)
                    .shard(i % 3);
            if (i % 10 == 0) {
                b.delay(Duration.ofSeconds(i));
            }
            if (i % 50 == 0) {
                b.orderingKey("key-" + i);
            }
            jobs.add(b.build());
        }
        statements.set(0);
        List<Long> ids = counted.transactionResult(c -> queue.enqueueAll(c.dsl(), jobs));
        assertThat(statements.get())
                .as("statements: the insert, plus one lock statement for the ordering keys")
                .isEqualTo(2);
        assertThat(ids).hasSize(2500).doesNotHaveDuplicates().isSorted();
        for (int i = 0; i < jobs.size(); i += 97) {
            var row = dsl.selectFrom(JOBS).where(JOBS.ID.eq(ids.get(i))).fetchSingle();
            NewJob job = jobs.get(i);
            assertThat(row.getQueue()).isEqualTo(job.queue());
            assertThat(row.getKind()).isEqualTo(job.kind());
            assertThat(row.getPayload().data()).isEqualTo("{\"n\": " + i + "}");
            assertThat(row.getPriority()).isEqualTo((short) job.priority());
            assertThat(row.getMaxAttempts()).isEqualTo(job.maxAttempts());
            assertThat(row.getShard()).isEqualTo(job.shard());
            assertThat(row.getOrderingKey()).isEqualTo(job.orderingKey().orElse(null));
            Duration delay = Duration.between(row.getCreatedAt(), row.getRunAt());
            assertThat(delay).isBetween(job.delay(), job.delay().plusSeconds(5));
        }
    }

    @Test
    void aCallWithUniqueKeysReturnsTheLiveDuplicateAndInsertsTheRest() {
        long existing =
                queue.enqueue(dsl, NewJob.builder("u", "k").uniqueKey("taken").build());
        List<NewJob> jobs = List.of(
                NewJob.of("u", "k"),
                NewJob.builder("u", "k").uniqueKey("taken").build(),
                NewJob.builder("u", "k").uniqueKey("fresh").build(),
                NewJob.of("u", "k"));
        List<Long> ids = queue.enqueueAll(dsl, jobs);
        assertThat(ids.get(1)).isEqualTo(existing);
        assertThat(List.of(ids.get(0), ids.get(2), ids.get(3)))
                .doesNotContain(existing)
                .isSorted();
        assertThat(dsl.fetchCount(JOBS, JOBS.QUEUE.eq("u"))).isEqualTo(4);
        assertThat(dsl.fetchValue(DSL.select(JOBS.UNIQUE_KEY).from(JOBS).where(JOBS.ID.eq(ids.get(2)))))
                .isEqualTo("fresh");
    }
}

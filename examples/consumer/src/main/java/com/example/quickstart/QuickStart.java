package com.example.quickstart;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.schema.LocksmithSchema;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * The README's quick start as a user's code: the schema and the environment, a job enqueued in the
 * transaction that writes the user's own row (and one whose transaction rolls back), and a worker
 * that runs it.
 */
public final class QuickStart {

    /** What the run saw. */
    public record Outcome(long jobId, List<String> handled, int handlerRuns, boolean jobGone, int orders,
            int jobsOfTheRolledBackOrder) {
    }

    private QuickStart() {
    }

    public static Outcome run(DataSource dataSource) throws InterruptedException {
        // 1. The schema, and the environment every repository and worker shares.
        LocksmithSchema.migrate(dataSource);
        Locksmith locksmith = Locksmith.of(dataSource);
        JobQueue queue = new JobQueue(locksmith);

        // 2. A repository call in the caller's transaction: the job exists exactly when it commits.
        DSLContext dsl = DSL.using(dataSource, SQLDialect.POSTGRES);
        dsl.execute("create table orders (id bigint primary key, customer text not null)");
        long jobId = dsl.transactionResult(tx -> {
            tx.dsl().execute("insert into orders (id, customer) values (?, ?)", 42, "ada@example.com");
            return queue.enqueue(tx.dsl(), NewJob.builder("emails", "order-confirmation")
                    .payload("{\"order\": 42}")
                    .uniqueKey("order-42")
                    .build());
        });
        try {
            dsl.transaction(tx -> {
                tx.dsl().execute("insert into orders (id, customer) values (?, ?)", 43, "bob@example.com");
                queue.enqueue(tx.dsl(), NewJob.builder("emails", "order-confirmation")
                        .payload("{\"order\": 43}")
                        .uniqueKey("order-43")
                        .build());
                throw new IllegalStateException("the order fails after its job was enqueued");
            });
        } catch (IllegalStateException expected) {
            // neither the order nor its job remains
        }

        // 3. A worker.
        List<String> handled = new CopyOnWriteArrayList<>();
        CountDownLatch ran = new CountDownLatch(1);
        try (JobWorker worker = JobWorker.builder(queue, "emails", (job, tx) -> {
                    handled.add(job.payload());
                    ran.countDown();
                })
                .threads(4)
                .build()
                .start()) {
            if (!ran.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the job did not run within 60 s");
            }
        }
        int jobsOfTheRolledBackOrder = dsl.fetchCount(DSL.table(DSL.name(Locksmith.DEFAULT_SCHEMA, "jobs")),
                DSL.field(DSL.name("unique_key")).eq("order-43"));
        return new Outcome(jobId, List.copyOf(handled), handled.size(), queue.find(dsl, jobId).isEmpty(),
                dsl.fetchCount(DSL.table(DSL.name("orders"))), jobsOfTheRolledBackOrder);
    }
}

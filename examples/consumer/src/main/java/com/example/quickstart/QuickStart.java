package com.example.quickstart;

import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferResult;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.schema.LocksmithSchema;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/** The README's quick start, as a user's code: the schema, one job, one transfer. */
public final class QuickStart {

    /** What the run saw. */
    public record Outcome(long jobId, List<Long> claimed, boolean completed, boolean transferred,
            BigDecimal fromBalance, BigDecimal toBalance) {
    }

    private QuickStart() {
    }

    public static Outcome run(DataSource dataSource) {
        LocksmithSchema.migrate(dataSource);
        DSLContext dsl = DSL.using(dataSource, SQLDialect.POSTGRES);

        JobQueue queue = new JobQueue(dsl);
        long jobId = dsl.transactionResult(c -> queue.enqueue(c.dsl(),
                NewJob.builder("emails", "welcome").payload("{\"user\": 42}").build()));
        List<Job> jobs = queue.claim("emails", 10, Duration.ofSeconds(30), "worker-1");
        boolean completed = jobs.size() == 1 && dsl.transactionResult(c -> queue.complete(c.dsl(), jobs.get(0)));

        Accounts accounts = new Accounts(dsl);
        Account from = accounts.open(new BigDecimal("100.00"));
        Account to = accounts.open(new BigDecimal("0.00"));
        TransferResult result = accounts.transfer(from.id(), to.id(), new BigDecimal("25.00"),
                TransferStrategy.PESSIMISTIC);

        return new Outcome(jobId, jobs.stream().map(Job::id).toList(), completed, result.transferred(),
                accounts.get(dsl, from.id()).balance(), accounts.get(dsl, to.id()).balance());
    }
}

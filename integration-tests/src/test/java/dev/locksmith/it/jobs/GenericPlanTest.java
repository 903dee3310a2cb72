package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.it.DatabaseTest;
import dev.locksmith.it.TestPostgres;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.jooq.impl.DefaultExecuteListenerProvider;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * PgJDBC server-prepares a statement from its fifth use on a connection, and PostgreSQL may
 * then cache a generic plan, planned without the bind values. A partial index can serve a claim,
 * or be the arbiter of {@code ON CONFLICT}, only when the planner can prove the index's predicate
 * ({@code status = 'pending'}) from the statement's, which a bound status does not allow: the
 * generic claim plan would scan and sort the whole table. These tests pin that the statuses are
 * literals in the SQL the library sends.
 */
class GenericPlanTest extends DatabaseTest {

    @BeforeEach
    void emptyQueue() {
        dsl.deleteFrom(JOBS).execute();
    }

    @Test
    void uniqueEnqueueClaimAndCompleteKeepWorkingOnOneConnectionUnderGenericPlans() {
        try (var one = TestPostgres.pool(database, 1)) {
            DSLContext single = DSL.using(one, SQLDialect.POSTGRES);
            JobQueue onOne = new JobQueue(single);
            for (int i = 0; i < 30; i++) {
                NewJob job = NewJob.builder("generic", "k").uniqueKey("key-" + i).build();
                long id = onOne.enqueue(single, job);
                assertThat(onOne.enqueue(single, job)).isEqualTo(id);
                List<Job> leased = onOne.claim("generic", 1, Duration.ofMinutes(1), "w");
                assertThat(leased).extracting(Job::id).containsExactly(id);
                boolean completed = single.transactionResult(c -> onOne.complete(c.dsl(), leased.get(0)));
                assertThat(completed).isTrue();
            }
            long forced = single.transactionResult(c -> {
                c.dsl().execute("SET LOCAL plan_cache_mode = force_generic_plan");
                long first = onOne.enqueue(c.dsl(), NewJob.builder("generic", "k").uniqueKey("forced").build());
                assertThat(onOne.enqueue(c.dsl(), NewJob.builder("generic", "k").uniqueKey("forced").build()))
                        .isEqualTo(first);
                assertThat(onOne.claimInTransaction(c.dsl(), "generic", 10)).extracting(Job::id)
                        .containsExactly(first);
                return first;
            });
            assertThat(onOne.find(single, forced)).isEmpty();
        }
        assertThat(dsl.fetchCount(JOBS)).isZero();
    }

    @Test
    void theGenericPlanOfATransactionalClaimUsesThePartialIndexOfPendingJobs() {
        // Many finished rows and a few pending ones, so that only the partial index is cheap.
        dsl.execute("INSERT INTO jobs (queue, kind, status, finished_at) "
                + "SELECT 'generic', 'k', 'done', now() FROM generate_series(1, 20000)");
        new JobQueue(dsl).enqueueAll(dsl, Collections.nCopies(10, NewJob.of("generic", "k")));
        dsl.execute("ANALYZE jobs");

        List<org.jooq.Query> sent = new ArrayList<>();
        DefaultConfiguration recording = new DefaultConfiguration();
        recording.set(pool).set(SQLDialect.POSTGRES).set(new DefaultExecuteListenerProvider(new org.jooq.ExecuteListener() {
            @Override
            public void executeStart(ExecuteContext ctx) {
                sent.add(ctx.query());
            }
        }));
        DSLContext recorded = DSL.using(recording);
        recorded.transaction(c -> assertThat(new JobQueue(recorded).claimInTransaction(c.dsl(), "generic", 3)).hasSize(3));
        org.jooq.Query claim = sent.stream().filter(q -> q.getSQL().startsWith("delete from \"jobs\""))
                .findFirst().orElseThrow();
        String arguments = String.join(", ",
                claim.getBindValues().stream().map(v -> dsl.renderInlined(DSL.inline(v))).toList());

        List<String> plan = dsl.transactionResult(c -> {
            c.dsl().execute("SET LOCAL plan_cache_mode = force_generic_plan");
            c.dsl().execute("PREPARE generic_claim AS " + numbered(claim.getSQL()));
            List<String> lines = c.dsl().fetch("EXPLAIN EXECUTE generic_claim(" + arguments + ")")
                    .getValues(0, String.class);
            c.dsl().execute("DEALLOCATE generic_claim");
            return lines;
        });
        System.out.println("generic plan of the transactional claim:\n  " + String.join("\n  ", plan));
        assertThat(String.join("\n", plan)).contains("jobs_claimable_idx").doesNotContain("Seq Scan");
    }

    /** JDBC's {@code ?} placeholders as PostgreSQL's {@code $1, $2, ...} (the claim has no {@code ?} operator). */
    private static String numbered(String jdbcSql) {
        Matcher m = Pattern.compile("\\?").matcher(jdbcSql);
        StringBuilder out = new StringBuilder();
        int n = 0;
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement("$" + ++n));
        }
        m.appendTail(out);
        return out.toString();
    }
}

package dev.locksmith.it;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;
import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.ExecutionMode;
import dev.locksmith.Locksmith;
import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import dev.locksmith.it.support.RecordingJdbc;
import dev.locksmith.jobs.GenerationSeams;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The hot statements run through the caller's jOOQ configuration by default, so its
 * {@code ExecuteListener}s see each of them with its SQL and bind values; with
 * {@link ExecutionMode#RAW_JDBC} they bypass it. A proxy on the data source records what the
 * driver actually receives, so "seen" is compared with "sent".
 */
class ExecutionModeTest extends DatabaseTest {

    private final RecordingJdbc recording = new RecordingJdbc();
    private DSLContext userDsl;
    // what the last workload claimed, acquired and transferred between
    private Job lastClaimed;
    private String key;
    private Account from;
    private Account to;

    @BeforeEach
    void userConfiguration() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
        userDsl = DSL.using(new DefaultConfiguration()
                .set(recording.wrap(pool))
                .set(SQLDialect.POSTGRES)
                .set(new Settings().withExecuteLogging(false))
                .set(recording.listener()));
    }

    /** What one operation sent and what listeners saw of it. */
    record Observed(List<String> sent, List<RecordingJdbc.Seen> seen) {
        List<String> seenSql() {
            return seen.stream().map(RecordingJdbc.Seen::sql).toList();
        }
    }

    private Observed observe(Runnable operation) {
        recording.clear();
        operation.run();
        Observed observed = new Observed(
                recording.sent().stream().filter(sql -> !upkeep(sql)).toList(),
                recording.seen().stream().filter(seen -> !upkeep(seen.sql())).toList());
        recording.clear();
        return observed;
    }

    /**
     * The pool's look at its lease generations (the layout, the role's rights, the slots' sizes),
     * which an acquisition makes at most once a second per pool after its own statements: upkeep,
     * not one of the hot statements compared here.
     */
    private static boolean upkeep(String sql) {
        return sql.contains("pg_catalog.pg_namespace")
                || sql.contains("has_sequence_privilege")
                || sql.contains("pg_sequence_last_value");
    }

    /** Runs one of each hot operation on repositories built with {@code repositoryDsl}. */
    private Map<String, Observed> workload(DSLContext repositoryDsl) {
        Map<String, Observed> seen = new LinkedHashMap<>();
        JobQueue queue = new JobQueue(repositoryDsl);
        userDsl.transaction(c -> queue.enqueueAll(
                c.dsl(), List.of(NewJob.of("it-q", "a"), NewJob.of("it-q", "b"), NewJob.of("it-q", "c"))));
        List<Job> claimed = new ArrayList<>();
        seen.put("claim", observe(() -> claimed.addAll(queue.claim("it-q", 1, Duration.ofSeconds(30), "worker-1"))));
        Job job = claimed.get(0);
        lastClaimed = job;
        seen.put(
                "heartbeat",
                observe(() ->
                        assertThat(queue.heartbeat(job, Duration.ofSeconds(60))).isTrue()));
        seen.put(
                "complete",
                observe(() -> userDsl.transaction(
                        c -> assertThat(queue.complete(c.dsl(), job)).isTrue())));
        seen.put(
                "claimInTransaction",
                observe(() -> userDsl.transaction(c ->
                        assertThat(queue.claimInTransaction(c.dsl(), "it-q", 1)).hasSize(1))));

        ChannelAccountPool accounts = new ChannelAccountPool(repositoryDsl);
        userDsl.transaction(c -> accounts.register(c.dsl(), List.of("GA", "GB")));
        List<ChannelAccount> acquired = new ArrayList<>();
        seen.put(
                "acquire",
                observe(() -> acquired.add(
                        accounts.acquire(Duration.ofSeconds(30), "owner-1").orElseThrow())));
        key = acquired.get(0).publicKey();
        seen.put(
                "extend",
                observe(() ->
                        userDsl.transaction(c -> accounts.extend(c.dsl(), key, "owner-1", Duration.ofSeconds(60)))));
        seen.put("release", observe(() -> userDsl.transaction(c -> accounts.release(c.dsl(), key, "owner-1"))));

        Accounts money = new Accounts(repositoryDsl);
        Account a = money.open(new BigDecimal("100.00"));
        Account b = money.open(new BigDecimal("100.00"));
        from = a;
        to = b;
        // the first call that runs a hot statement looks up once whether Citus distributes the
        // table: made here (a compare-and-swap that changes nothing), outside what is observed
        userDsl.transaction(c -> assertThat(money.updateIfVersion(c.dsl(), a.id(), a.version() + 1, a.balance()))
                .isFalse());
        // and the first SERIALIZABLE transaction looks once whether the server is Citus: made here
        // with two accounts of its own
        Account c1 = money.open(new BigDecimal("1.00"));
        Account c2 = money.open(new BigDecimal("1.00"));
        money.transfer(c1.id(), c2.id(), new BigDecimal("1.00"), TransferStrategy.SERIALIZABLE);
        for (TransferStrategy strategy : TransferStrategy.values()) {
            seen.put(
                    "transfer " + strategy,
                    observe(() -> assertThat(money.transfer(a.id(), b.id(), new BigDecimal("1.00"), strategy)
                                    .transferred())
                            .isTrue()));
        }
        return seen;
    }

    /** A statement as "verb table [binds]", for instance {@code update jobs [worker-1, 1]}. */
    private static String summary(RecordingJdbc.Seen seen) {
        Matcher table = Pattern.compile("\"locksmith\"\\.\"(\\w+)\"").matcher(seen.sql());
        String what =
                table.find() ? seen.sql().substring(0, seen.sql().indexOf(' ')) + " " + table.group(1) : seen.sql();
        return what + " "
                + seen.binds().stream()
                        .map(v -> v instanceof Object[] array ? Arrays.toString(array) : String.valueOf(v))
                        .toList();
    }

    private static List<String> summaries(Observed observed) {
        return observed.seen().stream().map(ExecutionModeTest::summary).toList();
    }

    @Test
    void throughJooqListenersSeeEveryHotStatementWithItsSqlAndBindValues() {
        Map<String, Observed> ops = workload(userDsl);

        ops.forEach((op, observed) ->
                assertThat(observed.seenSql()).as(op + ": seen = sent").isEqualTo(observed.sent()));
        ops.forEach((op, observed) -> observed.seen()
                .forEach(seen -> assertThat(seen.sql().chars().filter(c -> c == '?'))
                        .as(op + ": one placeholder per bind value")
                        .hasSize(seen.binds().size())));
        Job job = lastClaimed;
        // a claim looks at most once a second whether its queue has concurrency limits: the first
        // claim of the run does, the next ones may
        String limitsLook = "select job_concurrency_limits [it-q, it-q, it-q, it-q]";
        assertThat(summaries(ops.get("claim")))
                .containsExactly(limitsLook, "update jobs [worker-1, 0:00:30.000000, it-q]");
        assertThat(summaries(ops.get("heartbeat")))
                .containsExactly("update jobs [0:01:00.000000, " + job.id() + ", " + GenerationSeams.slot(job) + ", "
                        + job.leaseId() + "]");
        assertThat(summaries(ops.get("complete")))
                .containsExactly(
                        "delete jobs [[" + job.id() + "], " + GenerationSeams.slot(job) + ", [" + job.leaseId() + "]]");
        assertThat(summaries(ops.get("claimInTransaction")).stream().filter(seen -> !seen.equals(limitsLook)))
                .containsExactly("delete jobs [it-q]");

        // one statement: the pick (an account locked), then the lease inserted unless the look finds one
        List<Object> acquire = ops.get("acquire").seen().get(0).binds();
        assertThat(ops.get("acquire").seen()).hasSize(1);
        assertThat(summary(ops.get("acquire").seen().get(0))).startsWith("with channel_accounts [[");
        assertThat((Object[]) acquire.get(0)).hasSize(8); // the random probes
        assertThat(acquire.get(1))
                .isInstanceOf(Double.class)
                .isEqualTo(acquire.get(2)); // the random start, in both branches
        assertThat(acquire.subList(3, 5)).containsExactly("owner-1", "0:00:30.000000");
        // the account locked FOR KEY SHARE, then the expiry of its latest lease moved
        assertThat(summaries(ops.get("extend")))
                .containsExactly(
                        "select channel_accounts [" + key + "]",
                        "update channel_account_leases [0:01:00.000000, " + key + ", owner-1, " + key + "]");
        assertThat(summaries(ops.get("release")))
                .containsExactly("update channel_account_leases [" + key + ", owner-1, " + key + "]");

        long a = from.id();
        long b = to.id();
        assertThat(summaries(ops.get("transfer ATOMIC_GUARD")))
                .containsExactly("update accounts [1.00, " + a + ", 1.00]", "update accounts [1.00, " + b + "]");
        assertThat(summaries(ops.get("transfer PESSIMISTIC")))
                .containsExactly(
                        "select accounts [" + a + ", " + b + "]",
                        "update accounts [98.00, " + a + "]",
                        "update accounts [102.00, " + b + "]");
        assertThat(summaries(ops.get("transfer OPTIMISTIC")))
                .containsExactly(
                        "select accounts [" + a + ", " + b + "]",
                        "update accounts [97.00, " + a + ", 2]",
                        "update accounts [103.00, " + b + ", 2]");
        assertThat(summaries(ops.get("transfer SERIALIZABLE")))
                .containsExactly(
                        "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE []",
                        "select accounts [" + a + ", " + b + "]",
                        "update accounts [96.00, " + a + "]",
                        "update accounts [104.00, " + b + "]");
    }

    @Test
    void rawJdbcSendsTheSameStatementsButListenersSeeNoneOfTheHotOnes() {
        Map<String, Observed> throughJooq = workload(userDsl);
        DSLContext raw = Locksmith.builder(userDsl)
                .executionMode(ExecutionMode.RAW_JDBC)
                .build()
                .dsl();
        Map<String, Observed> throughJdbc = workload(raw);

        assertThat(throughJdbc.keySet()).isEqualTo(throughJooq.keySet());
        throughJdbc.forEach((op, observed) -> {
            assertThat(observed.sent())
                    .as(op + ": the same SQL in both modes")
                    .isEqualTo(throughJooq.get(op).sent());
            // the isolation level is set by Transactions through jOOQ; it is not a pre-rendered statement
            assertThat(observed.seenSql())
                    .as(op + ": seen by listeners")
                    .isEqualTo(
                            op.endsWith("SERIALIZABLE")
                                    ? List.of("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                                    : List.of());
        });
    }

    @Test
    void withNoListenerTheDefaultModeSendsTheSameStatements() {
        Map<String, Observed> listened = workload(userDsl);
        DSLContext quiet = DSL.using(new DefaultConfiguration()
                .set(recording.wrap(pool))
                .set(SQLDialect.POSTGRES)
                .set(new Settings().withExecuteLogging(false)));
        Map<String, Observed> straight = workload(quiet);
        straight.forEach((op, observed) ->
                assertThat(observed.sent()).as(op).isEqualTo(listened.get(op).sent()));
    }

    /**
     * jOOQ's execution settings apply to the hot statements in the default mode (a query timeout
     * is a reason to go through jOOQ even without a listener): a transfer that waits for a row
     * lock is cancelled.
     */
    @Test
    void theDefaultModeAppliesTheQueryTimeoutOfTheSettings() throws Exception {
        DSLContext timed = DSL.using(new DefaultConfiguration()
                .set(pool)
                .set(SQLDialect.POSTGRES)
                .set(new Settings().withExecuteLogging(false).withQueryTimeout(1)));
        Accounts accounts = new Accounts(
                timed, dev.locksmith.RetryPolicy.builder().maxAttempts(1).build());
        Account a = accounts.open(new BigDecimal("10.00"));
        Account b = accounts.open(new BigDecimal("10.00"));
        try (HeldTransaction holder = HeldTransaction.start(
                dsl,
                tx -> tx.selectFrom(dev.locksmith.codegen.Tables.ACCOUNTS)
                        .where(dev.locksmith.codegen.Tables.ACCOUNTS.ID.eq(a.id()))
                        .forUpdate()
                        .fetch())) {
            assertThatThrownBy(() -> accounts.transfer(a.id(), b.id(), BigDecimal.ONE, TransferStrategy.PESSIMISTIC))
                    .isInstanceOf(dev.locksmith.exception.StatementTimeoutException.class);
            holder.commit();
        }
    }

    @Test
    void theModeTravelsWithTheDslContextAndLeavesTheOriginalAlone() {
        DSLContext raw = Locksmith.builder(userDsl)
                .executionMode(ExecutionMode.RAW_JDBC)
                .build()
                .dsl();
        assertThat(Locksmith.of(userDsl).executionMode()).isEqualTo(ExecutionMode.JOOQ);
        assertThat(Locksmith.of(raw).executionMode()).isEqualTo(ExecutionMode.RAW_JDBC);
        assertThat(Locksmith.of(Locksmith.builder(raw)
                                .schema("elsewhere")
                                .build()
                                .dsl())
                        .executionMode())
                .isEqualTo(ExecutionMode.RAW_JDBC);
        assertThat(Locksmith.of(Locksmith.builder(raw)
                                .executionMode(ExecutionMode.RAW_JDBC)
                                .build()
                                .dsl())
                        .executionMode())
                .isEqualTo(ExecutionMode.RAW_JDBC);
        assertThat(Locksmith.of(Locksmith.builder(raw)
                                .executionMode(ExecutionMode.JOOQ)
                                .build()
                                .dsl())
                        .executionMode())
                .isEqualTo(ExecutionMode.JOOQ);
        assertThat(Locksmith.of(userDsl).executionMode()).isEqualTo(ExecutionMode.JOOQ);
    }

    @ParameterizedTest
    @EnumSource(ExecutionMode.class)
    void eachModeRunsInTheCallersTransaction(ExecutionMode mode) {
        DSLContext repositoryDsl =
                Locksmith.builder(userDsl).executionMode(mode).build().dsl();
        JobQueue queue = new JobQueue(repositoryDsl);
        long id = queue.enqueue(userDsl, NewJob.of("it-tx", "a"));
        assertThatThrownBy(() -> userDsl.transaction(c -> {
                    assertThat(queue.claimInTransaction(c.dsl(), "it-tx", 1))
                            .extracting(Job::id)
                            .containsExactly(id);
                    assertThat(queue.find(c.dsl(), id)).isEmpty();
                    throw new IllegalStateException("roll back");
                }))
                .hasMessageContaining("roll back");
        assertThat(queue.find(userDsl, id)).isPresent(); // the claim rolled back with the caller's transaction

        ChannelAccountPool accounts = new ChannelAccountPool(repositoryDsl);
        accounts.register(userDsl, List.of("GT"));
        ChannelAccount leased =
                accounts.acquire(Duration.ofMinutes(1), "holder").orElseThrow();
        assertThatThrownBy(() -> userDsl.transaction(c -> {
                    accounts.release(c.dsl(), leased.publicKey(), "holder");
                    throw new IllegalStateException("roll back");
                }))
                .hasMessageContaining("roll back");
        assertThat(accounts.find(userDsl, "GT").orElseThrow().lockedBy()).isEqualTo("holder");
        userDsl.transaction(c -> accounts.release(c.dsl(), leased.publicKey(), "holder"));
        assertThat(accounts.find(userDsl, "GT").orElseThrow().lockedBy()).isNull();
    }
}

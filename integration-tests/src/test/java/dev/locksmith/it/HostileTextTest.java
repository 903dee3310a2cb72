package dev.locksmith.it;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.LOCK_WAIT_EVENT;
import static dev.locksmith.codegen.Tables.SCHEDULES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferRequest;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.advisory.AdvisoryKey;
import dev.locksmith.advisory.AdvisoryLocks;
import dev.locksmith.audit.LockAudit;
import dev.locksmith.audit.LockAuditConfig;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.Claim;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobControl;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobType;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.SideEffectStatus;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.schedules.Schedule;
import dev.locksmith.schedules.Schedules;
import dev.locksmith.schedules.Trigger;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import org.jooq.DSLContext;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/**
 * One corpus of hostile strings against every API that takes text the library writes to the
 * database or hashes into a key. A string PostgreSQL cannot store as given (U+0000, refused with
 * SQLSTATE 22021 after aborting the caller's transaction; an unpaired surrogate, silently stored as
 * {@code ?}) is refused with {@link IllegalArgumentException} naming the field before anything is
 * sent: the caller's transaction stays usable and nothing is written. Strings PostgreSQL does store
 * (quotes, format specifiers, control characters, right-to-left marks, emoji) are stored and read
 * back exactly. Free text the library stores for people (an error, a reason) is repaired instead.
 */
class HostileTextTest extends DatabaseTest {

    /** Refused everywhere: PostgreSQL cannot store them as given. */
    static final List<String> REFUSED =
            List.of("a\u0000b", "\u0000", "k\uD800", "\uD800k", "k\uDC00", "\uDC00\uD83D", "k\uD83D", "\uDFFF");

    /** Stored and read back exactly. */
    static final List<String> STORED = List.of(
            "ключ",
            "k\uD83D\uDE00",
            "a'b\"c\\d",
            "%s%n{}$1",
            "Robert'); DROP TABLE jobs;--",
            "\ttab",
            "\u202Eevil",
            "\uFEFFbom",
            "a\u0001b\u007F",
            "日本語");

    /** An API that writes {@code text} in {@code tx} and returns what the database then holds. */
    private record Api(String field, Table<?> table, BiFunction<DSLContext, String, String> write) {}

    private List<Api> apis() {
        JobQueue queue = new JobQueue(dsl);
        Schedules schedules = new Schedules(dsl);
        ChannelAccountPool pool = new ChannelAccountPool(dsl);
        Accounts accounts = new Accounts(dsl);
        AdvisoryLocks locks = new AdvisoryLocks(this.pool);
        return List.of(
                new Api(
                        "queue",
                        JOBS,
                        (tx, s) -> queue.find(tx, queue.enqueue(tx, NewJob.of(s, "k")))
                                .orElseThrow()
                                .queue()),
                new Api(
                        "kind",
                        JOBS,
                        (tx, s) -> queue.find(tx, queue.enqueue(tx, NewJob.of("q", s)))
                                .orElseThrow()
                                .kind()),
                new Api(
                        "uniqueKey",
                        JOBS,
                        (tx, s) -> queue.find(
                                        tx,
                                        queue.enqueue(
                                                tx,
                                                NewJob.builder("q", "k")
                                                        .uniqueKey(s)
                                                        .build()))
                                .orElseThrow()
                                .uniqueKey()),
                new Api(
                        "orderingKey",
                        JOBS,
                        (tx, s) -> queue.find(
                                        tx,
                                        queue.enqueue(
                                                tx,
                                                NewJob.builder("q", "k")
                                                        .orderingKey(s)
                                                        .build()))
                                .orElseThrow()
                                .orderingKey()),
                new Api("queue", JOBS, (tx, s) -> {
                    queue.enqueue(tx, NewJob.of(s, "k"));
                    return queue.claimInTransaction(tx, Claim.of(s, 1)).get(0).queue();
                }),
                new Api(
                        "queue",
                        JOBS,
                        (tx, s) -> JobType.of(s, "k", String.class).queue()),
                new Api(
                        "kind",
                        JOBS,
                        (tx, s) -> JobType.of("q", s, String.class).kind()),
                new Api("queue", JOBS, (tx, s) -> queue.depth(s, 10).queue()),
                new Api("workerId", JOBS, (tx, s) -> {
                    queue.claim(Claim.of("nothing-here", 1), Duration.ofSeconds(30), s);
                    return s;
                }),
                new Api("queue", JOBS, (tx, s) -> {
                    JobWorker.builder(this.pool, s, (job, c) -> {}).build();
                    return s;
                }),
                new Api(
                        "workerId",
                        JOBS,
                        (tx, s) -> JobWorker.builder(this.pool, "q", (job, c) -> {})
                                .workerId(s)
                                .build()
                                .workerId()),
                new Api("queue", JOBS, (tx, s) -> {
                    TransactionalWorker.builder(this.pool, s, (jobs, c) -> {}).build();
                    return s;
                }),
                new Api("queue", JOBS, (tx, s) -> {
                    TwoPhaseWorker.builder(this.pool, s, job -> {}, job -> SideEffectStatus.UNKNOWN)
                            .build();
                    return s;
                }),
                new Api(
                        "name",
                        SCHEDULES,
                        (tx, s) -> schedules
                                .register(
                                        tx,
                                        Schedule.builder(s, Trigger.every(Duration.ofHours(1)), NewJob.of("q", "k"))
                                                .build())
                                .name()),
                new Api("name", SCHEDULES, (tx, s) -> s + schedules.pause(tx, s)),
                new Api("name", SCHEDULES, (tx, s) -> s + schedules.resume(tx, s)),
                new Api("name", SCHEDULES, (tx, s) -> s + schedules.remove(tx, s)),
                new Api("name", SCHEDULES, (tx, s) -> s + schedules.find(tx, s).isPresent()),
                new Api("cron expression", SCHEDULES, (tx, s) -> {
                    Trigger.cron("0 *" + s + " * * *", "UTC");
                    return s;
                }),
                new Api("publicKey", CHANNEL_ACCOUNTS, (tx, s) -> {
                    pool.register(tx, List.of(s));
                    return pool.find(tx, s).orElseThrow().publicKey();
                }),
                new Api("publicKey", CHANNEL_ACCOUNTS, (tx, s) -> s + pool.remove(tx, List.of(s))),
                new Api("owner", CHANNEL_ACCOUNTS, (tx, s) -> {
                    pool.acquire(Duration.ofSeconds(30), s);
                    return s;
                }),
                new Api("namespace", JOBS, (tx, s) -> {
                    locks.tryLock(tx, AdvisoryKey.of(s, "k"));
                    return AdvisoryKey.of(s, "k").namespace();
                }),
                new Api("businessKey", JOBS, (tx, s) -> {
                    locks.tryLock(tx, AdvisoryKey.of("n", s));
                    return AdvisoryKey.of("n", s).businessKey();
                }),
                new Api("resourceId", LOCK_WAIT_EVENT, (tx, s) -> {
                    try (LockAudit audit = new LockAudit(dsl, LockAuditConfig.defaults())) {
                        return audit.guard(tx, s, LockWait.noWait(), () -> s);
                    }
                }),
                new Api("transferId", ACCOUNTS, (tx, s) -> {
                    TransferRequest request = TransferRequest.of(1, 2, BigDecimal.ONE, TransferStrategy.ATOMIC_GUARD)
                            .withTransferId(s);
                    long a = accounts.open(tx, new BigDecimal("10.00")).id();
                    long b = accounts.open(tx, new BigDecimal("0.00")).id();
                    accounts.transfer(
                            tx,
                            TransferRequest.of(a, b, new BigDecimal("1.00"), request.strategy())
                                    .withTransferId(request.transferId().orElseThrow()));
                    return s;
                }));
    }

    @Test
    void everyApiRefusesWhatPostgresqlCannotStoreBeforeSendingAnything() {
        List<String> failures = new ArrayList<>();
        for (Api api : apis()) {
            for (String bad : REFUSED) {
                int before = dsl.fetchCount(api.table());
                String what = api.field() + " with " + escaped(bad);
                dsl.transaction(c -> {
                    try {
                        api.write().apply(c.dsl(), bad);
                        failures.add(what + " was accepted");
                    } catch (IllegalArgumentException expected) {
                        if (!expected.getMessage().startsWith(api.field())) {
                            failures.add(what + " was refused for another reason: " + expected.getMessage());
                        }
                    } catch (RuntimeException other) {
                        failures.add(what + " failed with " + other);
                    }
                    // the caller's transaction was not aborted: it goes on and commits
                    assertThat(c.dsl().fetchValue(DSL.inline(1))).isEqualTo(1);
                });
                if (dsl.fetchCount(api.table()) != before) {
                    failures.add(what + " wrote a row");
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void everyApiStoresWhatPostgresqlCanStoreExactly() {
        for (Api api : apis()) {
            if (api.field().equals("cron expression")) {
                continue; // none of them is a cron expression: the parser refuses them, rightly
            }
            for (String good : STORED) {
                assertThatThrownBy(() -> dsl.transaction(c -> {
                            String back = api.write().apply(c.dsl(), good);
                            assertThat(back)
                                    .as("%s with %s", api.field(), escaped(good))
                                    .startsWith(good);
                            throw new RolledBack();
                        }))
                        .as("%s with %s", api.field(), escaped(good))
                        .isInstanceOf(RolledBack.class);
            }
        }
    }

    /**
     * An error text or a control's reason is the library's record of a failure: it is repaired,
     * not refused (refusing it would make recording the failure fail), and a cut at the length
     * limit never leaves half a surrogate pair.
     */
    @Test
    void errorTextsAreStoredRepairedNotRefused() {
        JobQueue queue = new JobQueue(dsl);
        long failedId = queue.enqueue(dsl, NewJob.of("errors", "fail"));
        Job failed =
                queue.claim(Claim.of("errors", 1), Duration.ofSeconds(30), "w").get(0);
        dsl.transaction(c -> queue.fail(c.dsl(), failed, "boom\u0000 \uD800 \uD83D\uDE00"));
        assertThat(queue.find(dsl, failedId).orElseThrow().lastError()).isEqualTo("boom\uFFFD \uFFFD \uD83D\uDE00");

        long cancelledId = queue.enqueue(dsl, NewJob.of("errors-2", "cancel"));
        Job cancelled = queue.claim(Claim.of("errors-2", 1), Duration.ofSeconds(30), "w")
                .get(0);
        dsl.transaction(c -> queue.settle(c.dsl(), cancelled, JobControl.cancel("x\u0000y\uDC00")));
        assertThat(queue.find(dsl, cancelledId).orElseThrow().lastError()).isEqualTo("x\uFFFDy\uFFFD");

        long longId = queue.enqueue(dsl, NewJob.of("errors-3", "long"));
        Job longOne = queue.claim(Claim.of("errors-3", 1), Duration.ofSeconds(30), "w")
                .get(0);
        String text = "a".repeat(9_999) + "\uD83D\uDE00";
        dsl.transaction(c -> queue.fail(c.dsl(), longOne, text));
        assertThat(queue.find(dsl, longId).orElseThrow().lastError()).isEqualTo("a".repeat(9_999));
    }

    private static final class RolledBack extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }

    private static String escaped(String s) {
        StringBuilder b = new StringBuilder();
        s.chars().forEach(c -> b.append(c < 0x20 || c > 0x7e ? String.format("\\u%04X", c) : String.valueOf((char) c)));
        return b.toString();
    }
}

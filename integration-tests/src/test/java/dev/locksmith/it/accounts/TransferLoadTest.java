package dev.locksmith.it.accounts;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.RetryPolicy;
import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.OptimisticConflictException;
import dev.locksmith.accounts.TransferStrategy;
import dev.locksmith.it.support.Concurrently;
import dev.locksmith.it.support.DatabaseTest;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every strategy under the same load: 16 threads of random transfers among 10 hot accounts
 * and among 1,000. Each thread records what the library said it did; at the end every
 * account's balance must equal its opening balance plus exactly the transfers reported as
 * applied, the total must be unchanged, and no balance may be negative.
 */
class TransferLoadTest extends DatabaseTest {

    static final int THREADS = 16;
    static final int TRANSFERS_PER_THREAD = 500;
    static final BigDecimal OPENING = new BigDecimal("100.00");

    record Applied(long from, long to, BigDecimal amount) {}

    record Tally(List<Applied> applied, int insufficient, int exhausted) {}

    /** One transfer as the code under test does it; returns whether money moved. */
    @FunctionalInterface
    interface Transfer {
        boolean run(long from, long to, BigDecimal amount);
    }

    @ParameterizedTest(name = "{0} among {1} accounts")
    @CsvSource({
        "ATOMIC_GUARD, 10", "PESSIMISTIC, 10", "OPTIMISTIC, 10", "SERIALIZABLE, 10",
        "ATOMIC_GUARD, 1000", "PESSIMISTIC, 1000", "OPTIMISTIC, 1000", "SERIALIZABLE, 1000"
    })
    void moneyIsConservedAndEveryReportedTransferIsExactlyApplied(TransferStrategy strategy, int accountCount)
            throws Exception {
        dsl.deleteFrom(ACCOUNTS).execute();
        AtomicInteger retries = new AtomicInteger();
        RetryPolicy policy = RetryPolicy.builder()
                .maxAttempts(100)
                .initialBackoff(Duration.ofMillis(1))
                .maxBackoff(Duration.ofMillis(20))
                .listener((n, failure, pause) -> retries.incrementAndGet())
                .build();
        Accounts accounts = new Accounts(dsl, policy);
        List<Long> ids = accounts.openAll(dsl, Collections.nCopies(accountCount, OPENING)).stream()
                .map(Account::id)
                .toList();
        BigDecimal totalBefore = total();

        LoadOutcome outcome = runLoad(
                ids,
                accountCount,
                (from, to, amount) ->
                        accounts.transfer(from, to, amount, strategy).transferred());
        System.out.printf(
                "transfer %-12s %5d accounts: %5d applied, %4d insufficient, %3d gave up, %5d retries"
                        + " (%.2f per applied), %.1f s%n",
                strategy,
                accountCount,
                outcome.applied(),
                outcome.insufficient(),
                outcome.exhausted(),
                retries.get(),
                retries.get() / (double) Math.max(1, outcome.applied()),
                outcome.seconds());

        assertThat(total()).isEqualByComparingTo(totalBefore);
        assertThat(outcome.actual().values()).allSatisfy(b -> assertThat(b).isGreaterThanOrEqualTo(BigDecimal.ZERO));
        assertThat(outcome.actual().keySet()).isEqualTo(outcome.expected().keySet());
        outcome.actual()
                .forEach((id, balance) -> assertThat(balance)
                        .as("account %d", id)
                        .isEqualByComparingTo(outcome.expected().get(id)));
        assertThat(outcome.applied()).isPositive();
    }

    /** The control: the same load through a naive read-decide-write without locks or versions breaks. */
    @org.junit.jupiter.api.Test
    void naiveTransferUnderTheSameLoadLosesMoneyOrCreatesIt() throws Exception {
        dsl.deleteFrom(ACCOUNTS).execute();
        Accounts accounts = new Accounts(dsl);
        List<Long> ids = accounts.openAll(dsl, Collections.nCopies(10, OPENING)).stream()
                .map(Account::id)
                .toList();
        // each statement auto-commits, as in so much real code
        LoadOutcome outcome = runLoad(ids, 10, (from, to, amount) -> {
            BigDecimal source = dsl.fetchValue(ACCOUNTS.BALANCE, ACCOUNTS.ID.eq(from));
            BigDecimal target = dsl.fetchValue(ACCOUNTS.BALANCE, ACCOUNTS.ID.eq(to));
            if (source.compareTo(amount) < 0) {
                return false;
            }
            dsl.update(ACCOUNTS)
                    .set(ACCOUNTS.BALANCE, source.subtract(amount))
                    .where(ACCOUNTS.ID.eq(from))
                    .execute();
            dsl.update(ACCOUNTS)
                    .set(ACCOUNTS.BALANCE, target.add(amount))
                    .where(ACCOUNTS.ID.eq(to))
                    .execute();
            return true;
        });
        long wrong = outcome.actual().entrySet().stream()
                .filter(e -> e.getValue().compareTo(outcome.expected().get(e.getKey())) != 0)
                .count();
        System.out.printf(
                "naive transfer, 10 accounts: %d applied, %d of 10 balances wrong, total %s (expected %s)%n",
                outcome.applied(),
                wrong,
                total().toPlainString(),
                OPENING.multiply(BigDecimal.TEN).toPlainString());
        assertThat(wrong).isPositive();
    }

    record LoadOutcome(
            int applied,
            int insufficient,
            int exhausted,
            double seconds,
            Map<Long, BigDecimal> expected,
            Map<Long, BigDecimal> actual) {}

    /**
     * 16 threads x 500 random transfers (amounts 0.01..50.00, seeded per thread); returns what the
     * code under test reported and what the table holds afterwards.
     */
    private LoadOutcome runLoad(List<Long> ids, int accountCount, Transfer transfer) throws Exception {
        long started = System.nanoTime();
        List<Tally> tallies = Concurrently.run(THREADS, 300, thread -> {
            SplittableRandom random = new SplittableRandom(1000L * thread + accountCount);
            List<Applied> applied = new ArrayList<>();
            int insufficient = 0;
            int exhausted = 0;
            for (int i = 0; i < TRANSFERS_PER_THREAD; i++) {
                long from = ids.get(random.nextInt(ids.size()));
                long to = ids.get(random.nextInt(ids.size()));
                if (from == to) {
                    continue;
                }
                BigDecimal amount = BigDecimal.valueOf(random.nextInt(1, 5001), 2);
                try {
                    if (transfer.run(from, to, amount)) {
                        applied.add(new Applied(from, to, amount));
                    } else {
                        insufficient++;
                    }
                } catch (OptimisticConflictException e) {
                    exhausted++;
                }
            }
            return new Tally(applied, insufficient, exhausted);
        });
        double seconds = (System.nanoTime() - started) / 1e9;

        Map<Long, BigDecimal> expected = new HashMap<>();
        ids.forEach(id -> expected.put(id, OPENING));
        int appliedCount = 0;
        for (Tally tally : tallies) {
            for (Applied a : tally.applied()) {
                expected.merge(a.from(), a.amount().negate(), BigDecimal::add);
                expected.merge(a.to(), a.amount(), BigDecimal::add);
                appliedCount++;
            }
        }
        Map<Long, BigDecimal> actual = dsl.select(ACCOUNTS.ID, ACCOUNTS.BALANCE).from(ACCOUNTS).fetch().stream()
                .collect(Collectors.toMap(r -> r.value1(), r -> r.value2()));
        return new LoadOutcome(
                appliedCount,
                tallies.stream().mapToInt(Tally::insufficient).sum(),
                tallies.stream().mapToInt(Tally::exhausted).sum(),
                seconds,
                expected,
                actual);
    }

    private BigDecimal total() {
        return dsl.select(org.jooq.impl.DSL.sum(ACCOUNTS.BALANCE))
                .from(ACCOUNTS)
                .fetchSingle()
                .value1();
    }
}

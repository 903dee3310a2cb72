package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * With K open transactions each holding one claimed job, the (K+1)th claim takes a different
 * job while they are still open: SKIP LOCKED means no worker waits behind another. The same
 * query without SKIP LOCKED waits on the first held row (shown with a bounded wait, so the
 * test cannot hang).
 */
class HeadOfLineTest extends DatabaseTest {

    static final int K = 4;

    private JobQueue queue;

    @BeforeEach
    void jobs() {
        dsl.deleteFrom(JOBS).execute();
        queue = new JobQueue(dsl);
        queue.enqueueAll(dsl, Collections.nCopies(K + 2, NewJob.of("hol", "k")));
    }

    @Test
    void heldClaimsDoNotBlockTheNextClaimer() throws Exception {
        List<HeldTransaction> holders = new ArrayList<>();
        List<Long> held = new CopyOnWriteArrayList<>();
        try {
            for (int i = 0; i < K; i++) {
                holders.add(HeldTransaction.start(
                        dsl, tx -> queue.claimInTransaction(tx, "hol", 1).forEach(j -> held.add(j.id()))));
            }
            assertThat(held).hasSize(K).doesNotHaveDuplicates();

            List<Job> next = dsl.transactionResult(c -> queue.claimInTransaction(c.dsl(), "hol", 1));

            assertThat(next).hasSize(1);
            assertThat(held).doesNotContain(next.get(0).id());
        } finally {
            for (HeldTransaction h : holders) {
                h.rollback();
            }
        }
        assertThat(dsl.fetchCount(JOBS)).isEqualTo(K + 1);
    }

    @Test
    void withoutSkipLockedTheNextClaimerWaitsBehindTheFirstHolder() throws Exception {
        LockWait bounded = LockWait.upTo(Duration.ofMillis(300));
        try (HeldTransaction holder = HeldTransaction.start(dsl, tx -> queue.claimInTransaction(tx, "hol", 1))) {
            assertThatThrownBy(() -> dsl.transaction(c -> bounded.run(
                            c.dsl(),
                            () -> c.dsl()
                                    .select(JOBS.ID)
                                    .from(JOBS)
                                    .where(JOBS.QUEUE.eq("hol").and(JOBS.STATUS.eq("pending")))
                                    .orderBy(JOBS.PRIORITY, JOBS.RUN_AT, JOBS.ID)
                                    .limit(1)
                                    .forUpdate() // no SKIP LOCKED: queues up behind the holder
                                    .fetch())))
                    .isInstanceOf(LockNotAvailableException.class);
            holder.rollback();
        }
    }
}

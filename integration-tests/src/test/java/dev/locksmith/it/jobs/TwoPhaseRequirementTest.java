package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.it.support.TestPostgres;
import dev.locksmith.jobs.SideEffectStatus;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.provisioning.ScratchDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/**
 * A server with {@code max_prepared_transactions = 0} (PostgreSQL's default) cannot run the
 * two-phase worker: {@code start()} and {@code resolveNow()} refuse with a message that names the
 * setting and says how to set it, before anything else is sent. Against CI's PostgreSQL service,
 * which has the default, the test's own server is used; a server that allows prepared
 * transactions (embedded, Testcontainers) gets a second, small embedded server without them for
 * this test, stopped at its end.
 */
class TwoPhaseRequirementTest {

    @Test
    void aServerWithoutPreparedTransactionsIsRefusedWithAMessageSayingHowToSetThem() throws Exception {
        ScratchDatabase scratch = TestPostgres.freshEmpty("twophase_requirement");
        try {
            if (maxPreparedTransactions(scratch.dataSource()) == 0) {
                assertRefused(scratch.dataSource());
            } else {
                try (EmbeddedPostgres without = EmbeddedPostgres.builder()
                        .setServerConfig("max_prepared_transactions", "0")
                        .setServerConfig("max_connections", "10")
                        .setServerConfig("shared_buffers", "16MB")
                        .start()) {
                    assertThat(maxPreparedTransactions(without.getPostgresDatabase()))
                            .isZero();
                    assertRefused(without.getPostgresDatabase());
                }
            }
        } finally {
            TestPostgres.drop(scratch);
        }
    }

    private static void assertRefused(DataSource dataSource) {
        TwoPhaseWorker worker = TwoPhaseWorker.builder(dataSource, "pay", job -> {}, job -> SideEffectStatus.UNKNOWN)
                .build();
        for (Runnable call : new Runnable[] {worker::start, worker::resolveNow}) {
            assertThatThrownBy(call::run)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("max_prepared_transactions = 0")
                    .hasMessageContaining("ALTER SYSTEM SET max_prepared_transactions = 100")
                    .hasMessageContaining("restart the server");
        }
        assertThat(worker.liveThreads()).isZero();
        worker.close();
    }

    private static int maxPreparedTransactions(DataSource dataSource) {
        return Integer.parseInt(DSL.using(dataSource, SQLDialect.POSTGRES)
                .fetchValue("SELECT current_setting('max_prepared_transactions')")
                .toString());
    }
}

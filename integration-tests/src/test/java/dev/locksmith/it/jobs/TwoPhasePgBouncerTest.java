package dev.locksmith.it.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.PoolingMode;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.ResolveResult;
import dev.locksmith.jobs.TwoPhaseWorker;
import dev.locksmith.observe.JobEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The two-phase worker and its resolver through PgBouncer in transaction pooling mode:
 * {@code PREPARE TRANSACTION} ends the transaction, so PgBouncer takes the server connection back,
 * and {@code COMMIT PREPARED} runs on whichever one it hands out next, which works because a
 * prepared transaction belongs to no session. Runs where {@code LOCKSMITH_PGBOUNCER_PORT} names a
 * PgBouncer in front of the test server and that server allows prepared transactions; skipped
 * otherwise, with the reason (CI's PgBouncer fronts its PostgreSQL service, which has
 * {@code max_prepared_transactions = 0}).
 */
class TwoPhasePgBouncerTest extends TwoPhaseTest {

    private HikariDataSource bouncer;
    private DSLContext viaBouncer;
    private String bouncerSkipReason;

    @BeforeAll
    void connectThroughPgBouncer() {
        String port = System.getenv("LOCKSMITH_PGBOUNCER_PORT");
        if (port == null || port.isBlank()) {
            bouncerSkipReason = "LOCKSMITH_PGBOUNCER_PORT is not set: no PgBouncer to test through";
            return;
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://127.0.0.1:" + port.trim() + "/" + database.name() + "?prepareThreshold=0");
        config.setUsername(database.user());
        config.setPassword(database.password());
        config.setMaximumPoolSize(6);
        config.setMinimumIdle(0);
        config.setPoolName("it-2pc-pgbouncer");
        bouncer = new HikariDataSource(config);
        viaBouncer = DSL.using(bouncer, SQLDialect.POSTGRES);
        String identity = "SELECT system_identifier || ':' || current_database() FROM pg_control_system()";
        try {
            if (!dsl.fetchValue(identity).equals(viaBouncer.fetchValue(identity))) {
                bouncerSkipReason = "the PgBouncer on port " + port + " forwards to another server than the tests use";
            }
        } catch (RuntimeException e) {
            bouncerSkipReason = "the test database cannot be reached through the PgBouncer on port " + port + ": " + e;
        }
    }

    @BeforeEach
    void requirePgBouncer() {
        assumeTrue(bouncerSkipReason == null, bouncerSkipReason);
    }

    @AfterAll
    void closeBouncer() {
        if (bouncer != null) {
            bouncer.close();
        }
    }

    @Test
    void jobsCommitAndTheResolverSettlesThroughATransactionPooler() throws Exception {
        long left = queue.enqueue(dsl, NewJob.of("pay", "charge"));
        prepareByHand(left, gidOf(left));
        dsl.execute("INSERT INTO effect_ledger VALUES (?, ?)", gidOf(left), left);
        assertThat(TwoPhaseWorker.builder(
                                new JobQueue(Locksmith.builder(viaBouncer)
                                        .poolingMode(PoolingMode.TRANSACTION)
                                        .build()),
                                "pay",
                                recording(),
                                ledgerCheck())
                        .listen(false)
                        .resolveOlderThan(Duration.ZERO)
                        .build()
                        .resolveNow())
                .isEqualTo(new ResolveResult(1, 0, 0));

        List<Long> ids = new ArrayList<>(queue.enqueueAll(dsl, Collections.nCopies(60, NewJob.of("pay", "charge"))));
        CountDownLatch committed = new CountDownLatch(ids.size());
        try (TwoPhaseWorker worker = TwoPhaseWorker.builder(
                        new JobQueue(Locksmith.builder(Locksmith.builder(viaBouncer)
                                        .observer(counting(JobEvent.COMPLETED, committed))
                                        .build()
                                        .dsl())
                                .poolingMode(PoolingMode.TRANSACTION)
                                .build()),
                        "pay",
                        recording(),
                        ledgerCheck())
                .listen(false)
                .threads(4)
                .pollInterval(Duration.ofMillis(20))
                .build()
                .start()) {
            await(committed, "60 jobs committed through PgBouncer");
        }
        ids.add(left);
        var once = ids.stream().collect(Collectors.toMap(Function.identity(), id -> 1));
        assertThat(results()).isEqualTo(once);
        assertThat(effects()).isEqualTo(once);
        assertThat(queue.stats()).isEmpty();
    }
}

package dev.locksmith.it;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.LockWait;
import dev.locksmith.exception.LockNotAvailableException;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.HeldTransaction;
import java.math.BigDecimal;
import java.time.Duration;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/**
 * A bounded wait's lock_timeout never leaks: not to later statements of the transaction, and
 * not to the next user of the same pooled connection (a pool of one connection, checked by
 * backend pid).
 */
class LockWaitScopeTest extends DatabaseTest {

    @Override
    protected int poolSize() {
        return 1;
    }

    private String lockTimeout(DSLContext ctx) {
        return ctx.fetchValue("SHOW lock_timeout").toString();
    }

    private int pid(DSLContext ctx) {
        return ctx.select(DSL.field("pg_backend_pid()", Integer.class))
                .fetchSingle()
                .value1();
    }

    @Test
    void boundedWaitIsScopedToItsStatementAndTransaction() {
        long id = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, BigDecimal.ONE)
                .returning()
                .fetchSingle()
                .getId();
        String serverDefault = lockTimeout(dsl);
        int pidBefore = pid(dsl);
        LockWait wait = LockWait.upTo(Duration.ofMillis(250));

        String[] seen = new String[2];
        dsl.transaction(c -> {
            DSLContext tx = c.dsl();
            seen[0] = wait.run(tx, () -> {
                wait.applyTo(tx.selectFrom(ACCOUNTS).where(ACCOUNTS.ID.eq(id)).forUpdate())
                        .fetch();
                return lockTimeout(tx);
            });
            seen[1] = lockTimeout(tx);
        });

        assertThat(seen[0]).isEqualTo("250ms");
        assertThat(seen[1]).isEqualTo(serverDefault);
        assertThat(pid(dsl)).isEqualTo(pidBefore);
        assertThat(lockTimeout(dsl)).isEqualTo(serverDefault);
    }

    @Test
    void failedBoundedWaitLeavesTheServerDefaultOnThePooledConnection() throws Exception {
        long id = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, BigDecimal.ONE)
                .returning()
                .fetchSingle()
                .getId();
        String serverDefault = lockTimeout(dsl);
        LockWait wait = LockWait.upTo(Duration.ofMillis(50));
        // the holder needs its own connection: this class's pool has only one
        DSLContext other = DSL.using(database.dataSource(), org.jooq.SQLDialect.POSTGRES);
        int pooledPid = pid(dsl);
        try (HeldTransaction holder = HeldTransaction.start(
                other,
                tx -> tx.selectFrom(ACCOUNTS)
                        .where(ACCOUNTS.ID.eq(id))
                        .forUpdate()
                        .fetch())) {
            assertThatThrownBy(() -> dsl.transaction(c -> wait.run(
                            c.dsl(),
                            () -> wait.applyTo(c.dsl()
                                            .selectFrom(ACCOUNTS)
                                            .where(ACCOUNTS.ID.eq(id))
                                            .forUpdate())
                                    .fetch())))
                    .isInstanceOf(LockNotAvailableException.class);
        }
        assertThat(pid(dsl)).isEqualTo(pooledPid);
        assertThat(lockTimeout(dsl)).isEqualTo(serverDefault);
    }
}

package dev.locksmith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

class LockWaitTest {

    private final DSLContext dsl = DSL.using(SQLDialect.POSTGRES);

    private String render(LockWait wait) {
        return dsl.render(wait.applyTo(dsl.selectOne().from(DSL.table("t")).forUpdate()));
    }

    @Test
    void rendersTheLockingClause() {
        assertThat(render(LockWait.noWait())).endsWith("for update nowait");
        assertThat(render(LockWait.skipLocked())).endsWith("for update skip locked");
        assertThat(render(LockWait.forever())).endsWith("for update");
        assertThat(render(LockWait.upTo(Duration.ofSeconds(1)))).endsWith("for update");
    }

    @Test
    void boundIsRoundedUpToWholeMilliseconds() {
        assertThat(LockWait.upTo(Duration.ofMillis(250)).boundMillis()).isEqualTo(250);
        assertThat(LockWait.upTo(Duration.ofNanos(1)).boundMillis()).isEqualTo(1);
        assertThat(LockWait.upTo(Duration.ofNanos(1_500_000)).boundMillis()).isEqualTo(2);
    }

    @Test
    void onlyABoundedWaitHasBoundMillis() {
        for (LockWait unbounded : new LockWait[] {LockWait.forever(), LockWait.noWait(), LockWait.skipLocked()}) {
            assertThatThrownBy(unbounded::boundMillis)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("LockWait.upTo");
        }
    }

    @Test
    void rejectsBoundsPostgresCannotExpress() {
        assertThatThrownBy(() -> LockWait.upTo(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockWait.upTo(Duration.ofMillis(-5))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockWait.upTo(Duration.ofDays(30))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockWait.upTo(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void valueSemantics() {
        assertThat(LockWait.upTo(Duration.ofSeconds(1))).isEqualTo(LockWait.upTo(Duration.ofMillis(1000)));
        assertThat(LockWait.noWait().kind()).isEqualTo(LockWait.Kind.NO_WAIT);
        assertThat(LockWait.forever().bound()).isEmpty();
    }
}

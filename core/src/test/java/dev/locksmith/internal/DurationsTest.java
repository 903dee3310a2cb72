package dev.locksmith.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Backoff;
import dev.locksmith.RetryPolicy;
import dev.locksmith.audit.LockAuditConfig;
import dev.locksmith.jobs.JobWorker;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.Test;

/** Oversized durations fail early and clearly, naming the parameter and the bound. */
class DurationsTest {

    static final List<Duration> HUGE =
            List.of(Duration.ofDays(365L * 1_000_000), Duration.ofSeconds(Long.MAX_VALUE), Duration.ofDays(36_526));

    @Test
    void theBoundIsInclusiveAndEachCheckNamesItsParameter() {
        assertThat(Durations.positive("lease", Durations.MAX)).isEqualTo(Durations.MAX);
        assertThat(Durations.nonNegative("age", Duration.ZERO)).isEqualTo(Duration.ZERO);
        assertThatThrownBy(() -> Durations.positive("lease", Duration.ZERO))
                .hasMessage("lease must be positive, was PT0S");
        assertThatThrownBy(() -> Durations.nonNegative("age", Duration.ofSeconds(-1)))
                .hasMessage("age must not be negative, was PT-1S");
        assertThatThrownBy(() -> Durations.positive("lease", null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("lease");
        for (Duration huge : HUGE) {
            assertThatThrownBy(() -> Durations.positive("lease", huge))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("lease must be at most 36525 days (100 years), was ");
        }
    }

    @Test
    void anIntervalBindRefusesWhatWouldOverflowInsteadOfThrowingArithmeticException() {
        RenderedQuery q = RenderedQuery.of(
                DSL.using(SQLDialect.POSTGRES),
                DSL.using(SQLDialect.POSTGRES)
                        .select(DSL.currentOffsetDateTime().plus(DSL.param("lease", SQLDataType.INTERVALDAYTOSECOND))));
        for (Duration huge : HUGE) {
            assertThatThrownBy(() -> q.binds().setInterval("lease", huge))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease must be at most 36525 days");
        }
        q.binds().setInterval("lease", Durations.MAX).requireComplete();
    }

    @Test
    void configurationDurationsAreBoundedToo() {
        for (Duration huge : HUGE) {
            assertThatThrownBy(() -> RetryPolicy.builder().maxBackoff(huge))
                    .hasMessageContaining("maxBackoff must be at most");
            assertThatThrownBy(() -> RetryPolicy.builder().initialBackoff(huge))
                    .hasMessageContaining("initialBackoff must be at most");
            assertThatThrownBy(() -> new Backoff(Duration.ZERO, huge, 2.0, 0.5))
                    .hasMessageContaining("max must be at most");
            assertThatThrownBy(() -> LockAuditConfig.builder()
                            .probeDelay(huge)
                            .probeInterval(Duration.ofMillis(1))
                            .build())
                    .hasMessageContaining("probeDelay must be at most");
            assertThatThrownBy(() ->
                            LockAuditConfig.builder().slowWaitThreshold(huge).build())
                    .hasMessageContaining("slowWaitThreshold must be at most");
            JobWorker.Builder worker = JobWorker.builder(unusedDataSource(), "q", (job, tx) -> {});
            assertThatThrownBy(() -> worker.lease(huge)).hasMessageContaining("lease must be at most");
            assertThatThrownBy(() -> worker.pollInterval(huge)).hasMessageContaining("pollInterval must be at most");
            assertThatThrownBy(() -> worker.rescueInterval(huge))
                    .hasMessageContaining("rescueInterval must be at most");
            assertThatThrownBy(() -> worker.shutdownGrace(huge)).hasMessageContaining("shutdownGrace must be at most");
        }
    }

    /** Building a worker only validates settings; nothing connects. */
    private static DataSource unusedDataSource() {
        return (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    throw new UnsupportedOperationException(method.getName());
                });
    }
}

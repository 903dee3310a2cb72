package dev.locksmith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.exception.LocksmithException;
import dev.locksmith.exception.PgErrors;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

    @Test
    void backoffGrowsExponentiallyAndIsCapped() {
        RetryPolicy policy = RetryPolicy.builder()
                .initialBackoff(Duration.ofMillis(10))
                .maxBackoff(Duration.ofMillis(100))
                .multiplier(2)
                .jitter(0)
                .build();
        assertThat(policy.backoff(1, 0.7)).isEqualTo(Duration.ofMillis(10));
        assertThat(policy.backoff(2, 0.7)).isEqualTo(Duration.ofMillis(20));
        assertThat(policy.backoff(4, 0.7)).isEqualTo(Duration.ofMillis(80));
        assertThat(policy.backoff(5, 0.7)).isEqualTo(Duration.ofMillis(100));
        assertThat(policy.backoff(60, 0.7)).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void jitterTakesOffAtMostItsFraction() {
        RetryPolicy policy = RetryPolicy.builder()
                .initialBackoff(Duration.ofMillis(100))
                .maxBackoff(Duration.ofSeconds(1))
                .jitter(0.5)
                .build();
        assertThat(policy.backoff(1, 0.0)).isEqualTo(Duration.ofMillis(100));
        assertThat(policy.backoff(1, 0.5)).isEqualTo(Duration.ofMillis(75));
        assertThat(policy.backoff(1, 0.999_999)).isBetween(Duration.ofMillis(50), Duration.ofMillis(51));
    }

    @Test
    void defaultsRetryDeadlocksAndSerializationFailuresButNotLockTimeouts() {
        RetryPolicy policy = RetryPolicy.defaults();
        assertThat(policy.maxAttempts()).isEqualTo(5);
        assertThat(policy.isRetryable(failure("40P01"))).isTrue();
        assertThat(policy.isRetryable(failure("40001"))).isTrue();
        assertThat(policy.isRetryable(failure("55P03"))).isFalse();
        assertThat(policy.isRetryable(failure("23505"))).isFalse();
        assertThat(RetryPolicy.builder()
                        .retryOn(RetryPolicy.Failure.LOCK_NOT_AVAILABLE)
                        .build()
                        .isRetryable(failure("55P03")))
                .isTrue();
    }

    @Test
    void rejectsNonsenseWithMessagesThatNameTheField() {
        assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(0)).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> RetryPolicy.builder().jitter(1.5)).hasMessageContaining("jitter");
        assertThatThrownBy(() -> RetryPolicy.builder().multiplier(0.5)).hasMessageContaining("multiplier");
        assertThatThrownBy(() -> RetryPolicy.builder().initialBackoff(Duration.ofMillis(-1)))
                .hasMessageContaining("initialBackoff");
        assertThatThrownBy(() -> RetryPolicy.builder()
                        .initialBackoff(Duration.ofSeconds(5))
                        .maxBackoff(Duration.ofSeconds(1))
                        .build())
                .hasMessageContaining("maxBackoff");
        assertThatThrownBy(() -> RetryPolicy.defaults().backoff(0, 0.1)).hasMessageContaining("failedAttempts");
    }

    /** The typed exception locksmith throws for a failure with {@code sqlState}. */
    private static LocksmithException failure(String sqlState) {
        return PgErrors.translate(new java.sql.SQLException("failure " + sqlState, sqlState));
    }
}

package dev.locksmith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        assertThat(policy.isRetryable(new DeadlockException("d", "40P01", null)))
                .isTrue();
        assertThat(policy.isRetryable(new SerializationFailureException("s", "40001", null)))
                .isTrue();
        assertThat(policy.isRetryable(new LockNotAvailableException("l", "55P03", null)))
                .isFalse();
        assertThat(policy.isRetryable(new UniqueViolationException("u", "23505", "k", null)))
                .isFalse();
        assertThat(RetryPolicy.builder()
                        .retryOn(RetryPolicy.Failure.LOCK_NOT_AVAILABLE)
                        .build()
                        .isRetryable(new LockNotAvailableException("l", "55P03", null)))
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
}

package dev.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What {@code bench horizon} reports per phase, and the options it refuses. */
class HorizonBenchTest {

    @Test
    void eachPhaseKeepsItsOwnTimesAndSeconds() {
        PhaseTimes times = new PhaseTimes(3);
        times.time(1_000_000);
        times.time(3_000_000);
        times.second(10);
        times.phase(1);
        times.time(20_000_000);
        times.second(4);
        times.second(6);

        assertThat(times.medianMillis(0)).isEqualTo(2.0);
        assertThat(times.timed(0)).isEqualTo(2);
        assertThat(times.medianMillis(1)).isEqualTo(20.0);
        assertThat(times.rate(1)).containsExactly(5.0, 4.0);
        assertThat(times.medianMillis(2)).isNaN();
        assertThat(times.rate(2)[0]).isNaN();
    }

    @Test
    void refusesPhasesRatesAndLoadsThatCannotRun() {
        Duration s = Duration.ofSeconds(1);
        assertThat(new HorizonBench.Options(s, s, s, 1000, 10, 1000, 200, 1000, true, true, false, false).hold())
                .isEqualTo(s);
        assertThatThrownBy(() -> new HorizonBench.Options(
                        s, Duration.ZERO, s, 1000, 10, 1000, 200, 1000, true, true, false, false))
                .hasMessageContaining("phase lengths");
        assertThatThrownBy(() -> new HorizonBench.Options(s, s, s, 5, 10, 1000, 200, 1000, true, true, false, false))
                .hasMessageContaining("batch");
        assertThatThrownBy(() -> new HorizonBench.Options(s, s, s, 1000, 10, 1000, 200, 0, true, true, false, false))
                .hasMessageContaining("generation");
        assertThatThrownBy(
                        () -> new HorizonBench.Options(s, s, s, 1000, 10, 1000, 200, 1000, false, false, false, false))
                .hasMessageContaining("--loads");
    }
}

package dev.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class StatsAndReportTest {

    @Test
    void onlySelectsCasesByAWholeWordOfTheirConfiguration() {
        BenchOptions all = new BenchOptions(java.time.Duration.ZERO, java.time.Duration.ofSeconds(1), 1, java.util.List.of(), false);
        BenchOptions some = new BenchOptions(java.time.Duration.ZERO, java.time.Duration.ofSeconds(1), 1, java.util.List.of(),
                false, java.util.List.of("size=100", "pessimistic"));
        assertThat(all.selects("random_start size=1000000")).isTrue();
        assertThat(some.selects("random_start size=100")).isTrue();
        assertThat(some.selects("random_start size=10000")).isFalse();
        assertThat(some.selects("pessimistic accounts=10")).isTrue();
        assertThat(some.selects("optimistic accounts=10")).isFalse();
    }

    @Test
    void medianMinMax() {
        assertThat(Stats.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(Stats.median(List.of(4.0, 1.0, 3.0, 2.0))).isEqualTo(2.5);
        assertThat(Stats.min(List.of(4.0, 1.0, 3.0))).isEqualTo(1.0);
        assertThat(Stats.max(List.of(4.0, 1.0, 3.0))).isEqualTo(4.0);
        assertThatThrownBy(() -> Stats.median(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void nearestRankPercentiles() {
        long[] hundred = new long[100];
        for (int i = 0; i < 100; i++) {
            hundred[i] = i + 1;
        }
        assertThat(Stats.percentile(hundred, 50)).isEqualTo(50);
        assertThat(Stats.percentile(hundred, 99)).isEqualTo(99);
        assertThat(Stats.percentile(hundred, 100)).isEqualTo(100);
        assertThat(Stats.percentile(new long[] {7}, 99)).isEqualTo(7);
        assertThatThrownBy(() -> Stats.percentile(hundred, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void latenciesMergeSorted() {
        Latencies a = new Latencies();
        Latencies b = new Latencies();
        for (int i = 0; i < 3000; i++) {
            a.record(3000 - i);
        }
        b.record(0);
        long[] all = Latencies.mergeSorted(List.of(a, b));
        assertThat(all).hasSize(3001).startsWith(0, 1, 2).endsWith(3000);
    }

    private static Result result(String variant, int workers, double... runs) {
        return new Result("queue-tx", "batch=10", workers, variant, "jobs/s",
                java.util.Arrays.stream(runs).boxed().toList(),
                variant.equals("library") ? Optional.of(1.5) : Optional.empty(),
                variant.equals("library") ? Optional.of(9.25) : Optional.empty(), 0, Map.of());
    }

    @Test
    void pairsLibraryWithRawAndComputesTheRatioOfMedians() {
        Report report = new Report(List.of(result("raw", 4, 100, 90, 110), result("library", 4, 95, 80, 99),
                result("library", 8, 50)));
        assertThat(report.rows()).hasSize(2);
        assertThat(report.rows().get(0).ratio()).hasValueSatisfying(r -> assertThat(r).isCloseTo(0.95, org.assertj.core.data.Offset.offset(1e-9)));
        assertThat(report.rows().get(1).ratio()).isEmpty();
        assertThat(report.violations()).isZero();
    }

    @Test
    void formatsTableJsonCsvAndSvg() {
        Report report = new Report(List.of(result("raw", 1, 200), result("library", 1, 190),
                result("raw", 4, 400), result("library", 4, 380)));
        assertThat(report.table()).contains("| queue-tx").contains("190 [190-190] jobs/s").contains("0.95")
                .contains("1.50 / 9.25");
        assertThat(report.json()).startsWith("[\n  {\"workload\":\"queue-tx\"").contains("\"library_over_raw\":0.950")
                .contains("\"runs\":[190.000]").contains("\"p99_ms\":9.250").endsWith("}\n]\n");
        assertThat(report.csv().lines()).hasSize(5).first().asString().startsWith("workload,config,workers");
        assertThat(report.csv()).contains("queue-tx,batch=10,4,library,jobs/s,380.000");
        String svg = report.svg();
        assertThat(svg).startsWith("<svg").endsWith("</svg>\n").contains("<polyline").contains("stroke-dasharray")
                .contains("queue-tx (jobs/s)");
    }
}

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
        BenchOptions all = new BenchOptions(
                java.time.Duration.ZERO, java.time.Duration.ofSeconds(1), 1, java.util.List.of(), false);
        BenchOptions some = new BenchOptions(
                java.time.Duration.ZERO,
                java.time.Duration.ofSeconds(1),
                1,
                java.util.List.of(),
                false,
                java.util.List.of("size=100", "pessimistic"));
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
        return new Result(
                "queue-tx",
                "batch=10",
                workers,
                variant,
                "jobs/s",
                java.util.Arrays.stream(runs).boxed().toList(),
                variant.equals("library") ? Optional.of(1.5) : Optional.empty(),
                variant.equals("library") ? Optional.of(9.25) : Optional.empty(),
                0,
                Map.of());
    }

    @Test
    void putsEveryLibraryVariantOnTheRowOfItsCaseEachWithItsRatioToRaw() {
        Report report = new Report(List.of(
                result("library", 4, 92),
                result("library-listened", 4, 90),
                result("library-jdbc", 4, 95),
                result("raw", 4, 100)));
        assertThat(report.rows()).singleElement().satisfies(row -> {
            assertThat(row.ratio())
                    .hasValueSatisfying(r -> assertThat(r).isCloseTo(0.92, org.assertj.core.data.Offset.offset(1e-9)));
            assertThat(row.listenedRatio())
                    .hasValueSatisfying(r -> assertThat(r).isCloseTo(0.90, org.assertj.core.data.Offset.offset(1e-9)));
            assertThat(row.jdbcRatio())
                    .hasValueSatisfying(r -> assertThat(r).isCloseTo(0.95, org.assertj.core.data.Offset.offset(1e-9)));
        });
        assertThat(report.table())
                .contains("| lib/raw | lis/raw | jdbc/raw |")
                .contains("|    0.92 |    0.90 |    0.95 |");
        assertThat(report.csv())
                .contains("queue-tx,batch=10,4,library-jdbc,jobs/s,95.000,95.000,95.000,,,0.950,0")
                .contains("queue-tx,batch=10,4,library-listened,jobs/s,90.000,90.000,90.000,,,0.900,0");
        assertThat(report.json()).contains("\"variant\":\"library-jdbc\"").contains("\"variant\":\"library-listened\"");
    }

    @Test
    void showsTheClientCpuOfEveryVariant() {
        Result lib = new Result(
                "pool",
                "size=100",
                4,
                "library",
                "cycles/s",
                List.of(100.0),
                Optional.empty(),
                Optional.empty(),
                0,
                Map.of(Result.CLIENT_CPU, 52.4));
        Result raw = new Result(
                "pool",
                "size=100",
                4,
                "raw",
                "cycles/s",
                List.of(100.0),
                Optional.empty(),
                Optional.empty(),
                0,
                Map.of(Result.CLIENT_CPU, 48.6));
        assertThat(new Report(List.of(lib, raw)).table())
                .contains("52 / - / - / 49")
                .doesNotContain("client_us=");
    }

    @Test
    void pairsLibraryWithRawAndComputesTheRatioOfMedians() {
        Report report = new Report(
                List.of(result("raw", 4, 100, 90, 110), result("library", 4, 95, 80, 99), result("library", 8, 50)));
        assertThat(report.rows()).hasSize(2);
        assertThat(report.rows().get(0).ratio())
                .hasValueSatisfying(r -> assertThat(r).isCloseTo(0.95, org.assertj.core.data.Offset.offset(1e-9)));
        assertThat(report.rows().get(1).ratio()).isEmpty();
        assertThat(report.rows().get(0).jdbcRatio()).isEmpty();
        assertThat(report.violations()).isZero();
    }

    @Test
    void formatsTableJsonCsvAndSvg() {
        Report report = new Report(List.of(
                result("raw", 1, 200), result("library", 1, 190), result("raw", 4, 400), result("library", 4, 380)));
        assertThat(report.table())
                .contains("| queue-tx")
                .contains("190 [190-190] jobs/s")
                .contains("0.95")
                .contains("1.50 / 9.25");
        assertThat(report.json())
                .startsWith("[\n  {\"workload\":\"queue-tx\"")
                .contains("\"library_over_raw\":0.950")
                .contains("\"runs\":[190.000]")
                .contains("\"p99_ms\":9.250")
                .endsWith("}\n]\n");
        assertThat(report.csv().lines()).hasSize(5).first().asString().startsWith("workload,config,workers");
        assertThat(report.csv()).contains("queue-tx,batch=10,4,library,jobs/s,380.000");
        String svg = report.svg();
        assertThat(svg)
                .startsWith("<svg")
                .endsWith("</svg>\n")
                .contains("<polyline")
                .contains("stroke-dasharray")
                .contains("queue-tx (jobs/s)");
    }

    @Test
    void onlySelectsCasesByAnyWordOrByAllWordsJoinedWithPlus() {
        BenchOptions options = new BenchOptions(
                java.time.Duration.ZERO,
                java.time.Duration.ofSeconds(1),
                1,
                List.of(),
                false,
                List.of("batch=1", "random_probes+size=100"));
        assertThat(options.selects("batch=1")).isTrue();
        assertThat(options.selects("batch=10")).isFalse();
        assertThat(options.selects("random_probes size=100 leased=0%")).isTrue();
        assertThat(options.selects("random_probes size=1000000 leased=0%")).isFalse();
        assertThat(options.selects("random_start size=100 leased=0%")).isFalse();
    }
}

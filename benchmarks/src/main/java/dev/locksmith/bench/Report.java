package dev.locksmith.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Benchmark results as a text table, JSON, CSV and an SVG chart of throughput against workers.
 * The library's results of a case (in its default execution mode as the session configures it,
 * and where measured with a listener and in raw JDBC mode) and the raw baseline sit on one row,
 * with the ratio of each to the baseline.
 */
public final class Report {

    /**
     * A library result and, where there are, the library with a listener and in raw JDBC mode,
     * and the raw baseline of the same case.
     */
    public record Row(
            Result library,
            Optional<Result> libraryListened,
            Optional<Result> libraryJdbc,
            Optional<Result> raw,
            Optional<Result> pgbench,
            Optional<Result> plain) {

        /** A row without pgbench results. */
        public Row(
                Result library, Optional<Result> libraryListened, Optional<Result> libraryJdbc, Optional<Result> raw) {
            this(library, libraryListened, libraryJdbc, raw, Optional.empty(), Optional.empty());
        }

        /** Median library throughput over median pgbench throughput of the library's SQL. */
        public Optional<Double> pgbenchRatio() {
            return pgbench.filter(r -> r.median() > 0).map(r -> library.median() / r.median());
        }

        /**
         * The library's SQL over the plain SQL, both in pgbench: what the statement itself costs
         * beyond the plainest one that does the same job.
         */
        public Optional<Double> statementRatio() {
            return pgbench.flatMap(p -> plain.filter(r -> r.median() > 0).map(r -> p.median() / r.median()));
        }

        /** Median library throughput (default mode, no listener) over median raw throughput. */
        public Optional<Double> ratio() {
            return ratio(library);
        }

        /** Median library throughput with a listener (through jOOQ) over median raw throughput. */
        public Optional<Double> listenedRatio() {
            return libraryListened.flatMap(this::ratio);
        }

        /** Median library throughput in raw JDBC mode over median raw throughput. */
        public Optional<Double> jdbcRatio() {
            return libraryJdbc.flatMap(this::ratio);
        }

        private Optional<Double> ratio(Result of) {
            return raw.filter(r -> r.median() > 0).map(r -> of.median() / r.median());
        }

        /** Every result of the row. */
        List<Result> results() {
            List<Result> all = new ArrayList<>(List.of(library));
            libraryListened.ifPresent(all::add);
            libraryJdbc.ifPresent(all::add);
            raw.ifPresent(all::add);
            pgbench.ifPresent(all::add);
            plain.ifPresent(all::add);
            return all;
        }
    }

    private final List<Row> rows;

    /** A report over {@code results}, putting each library result with the other variants of its case. */
    public Report(List<Result> results) {
        Map<String, Map<String, Result>> byVariant = new LinkedHashMap<>();
        for (Result r : results) {
            byVariant.computeIfAbsent(r.variant(), v -> new LinkedHashMap<>()).put(key(r), r);
        }
        List<Row> paired = new ArrayList<>();
        for (Result r : results) {
            if (r.variant().equals(Result.LIBRARY)) {
                paired.add(new Row(
                        r,
                        find(byVariant, Result.LIBRARY_LISTENED, r),
                        find(byVariant, Result.LIBRARY_JDBC, r),
                        find(byVariant, Result.RAW, r),
                        find(byVariant, Result.PGBENCH, r),
                        find(byVariant, Result.PGBENCH_PLAIN, r)));
            }
        }
        this.rows = List.copyOf(paired);
    }

    private static Optional<Result> find(Map<String, Map<String, Result>> byVariant, String variant, Result of) {
        return Optional.ofNullable(byVariant.getOrDefault(variant, Map.of()).get(key(of)));
    }

    private static String key(Result r) {
        return r.workload() + "|" + r.config() + "|" + r.workers();
    }

    /** The paired rows, in run order. */
    public List<Row> rows() {
        return rows;
    }

    /** Total correctness violations over every result. */
    public long violations() {
        return rows.stream()
                .flatMap(r -> r.results().stream())
                .mapToLong(Result::violations)
                .sum();
    }

    /**
     * A fixed-width table for terminals and the README: the library in the default mode as the
     * session configures it (no listener), with a listener (through jOOQ) and in raw JDBC mode,
     * each with its ratio to raw JDBC, and the client CPU per unit of each; latencies are the
     * default mode's.
     */
    public String table() {
        StringBuilder out = new StringBuilder();
        String format = "| %-11s | %-26s | %7s | %-30s | %-30s | %-30s | %-30s | %-30s | %-30s | %7s | %7s | %7s "
                + "| %7s | %9s | %-23s | %-17s | %s |%n";
        String header = String.format(
                Locale.ROOT,
                format,
                "workload",
                "config",
                "workers",
                "library median [min-max]",
                "+ listener median [min-max]",
                "RAW_JDBC median [min-max]",
                "raw median [min-max]",
                "pgbench median [min-max]",
                "plain pgbench median [min-max]",
                "lib/raw",
                "lis/raw",
                "jdbc/raw",
                "lib/pgb",
                "pgb/plain",
                "client us lib/lis/jdbc/raw",
                "p50 / p99 ms",
                "violations");
        out.append(header);
        out.append(header.replaceAll("[^|\n]", "-"));
        for (Row row : rows) {
            Result lib = row.library();
            String latency = lib.p50Millis()
                    .map(p50 -> String.format(
                            Locale.ROOT, "%.2f / %.2f", p50, lib.p99Millis().orElse(Double.NaN)))
                    .orElse("");
            Map<String, Double> shown = new TreeMap<>(lib.extras());
            shown.remove(Result.CLIENT_CPU);
            String extras = shown.isEmpty() ? "" : " " + extras(shown);
            String cpu = String.join(
                    " / ",
                    clientCpu(Optional.of(lib)),
                    clientCpu(row.libraryListened()),
                    clientCpu(row.libraryJdbc()),
                    clientCpu(row.raw()));
            out.append(String.format(
                    Locale.ROOT,
                    format,
                    lib.workload(),
                    lib.config(),
                    Integer.toString(lib.workers()),
                    spread(lib),
                    row.libraryListened().map(Report::spread).orElse("n/a"),
                    row.libraryJdbc().map(Report::spread).orElse("n/a"),
                    row.raw().map(Report::spread).orElse("n/a"),
                    row.pgbench().map(Report::spread).orElse("n/a"),
                    row.plain().map(Report::spread).orElse("n/a"),
                    ratio(row.ratio()),
                    ratio(row.listenedRatio()),
                    ratio(row.jdbcRatio()),
                    ratio(row.pgbenchRatio()),
                    ratio(row.statementRatio()),
                    cpu,
                    latency,
                    row.results().stream().mapToLong(Result::violations).sum() + extras));
        }
        return out.toString();
    }

    /**
     * A narrow table for the demo: per case, the library's rate beside the plain-JDBC baseline's,
     * their ratio, and the correctness counters (with the workload's extra figures). One run of
     * each: the figures show the workloads at work, they do not measure them.
     */
    public String brief() {
        StringBuilder out = new StringBuilder();
        String format = "| %-11s | %-41s | %7s | %-20s | %-20s | %7s | %s |%n";
        String header = String.format(
                Locale.ROOT, format, "workload", "config", "workers", "library", "raw JDBC", "lib/raw", "violations");
        out.append(header);
        out.append(header.replaceAll("[^|\n]", "-"));
        for (Row row : rows) {
            Result lib = row.library();
            Map<String, Double> shown = new TreeMap<>(lib.extras());
            shown.remove(Result.CLIENT_CPU);
            out.append(String.format(
                    Locale.ROOT,
                    format,
                    lib.workload(),
                    lib.config(),
                    Integer.toString(lib.workers()),
                    rate(lib),
                    row.raw().map(Report::rate).orElse("n/a"),
                    ratio(row.ratio()),
                    row.results().stream().mapToLong(Result::violations).sum()
                            + (shown.isEmpty() ? "" : " " + extras(shown))));
        }
        return out.toString();
    }

    private static String rate(Result r) {
        return String.format(Locale.ROOT, "%,.0f %s", r.median(), r.unit());
    }

    private static String clientCpu(Optional<Result> result) {
        return result.map(r -> r.extras().get(Result.CLIENT_CPU))
                .map(v -> String.format(Locale.ROOT, "%.0f", v))
                .orElse("-");
    }

    private static String ratio(Optional<Double> ratio) {
        return ratio.map(x -> String.format(Locale.ROOT, "%.2f", x)).orElse("n/a");
    }

    private static String spread(Result r) {
        return String.format(Locale.ROOT, "%,.0f [%,.0f-%,.0f] %s", r.median(), r.min(), r.max(), r.unit());
    }

    private static String extras(Map<String, Double> extras) {
        List<String> parts = new ArrayList<>();
        new TreeMap<>(extras).forEach((k, v) -> parts.add(String.format(Locale.ROOT, "%s=%.2f", k, v)));
        return String.join(" ", parts);
    }

    /** Every result as JSON (an array of objects), for machines. */
    public String json() {
        List<String> items = new ArrayList<>();
        for (Row row : rows) {
            items.add(json(row.library(), row.ratio()));
            row.libraryListened().ifPresent(r -> items.add(json(r, row.listenedRatio())));
            row.libraryJdbc().ifPresent(r -> items.add(json(r, row.jdbcRatio())));
            row.raw().ifPresent(r -> items.add(json(r, Optional.empty())));
            row.pgbench().ifPresent(r -> items.add(json(r, Optional.empty())));
            row.plain().ifPresent(r -> items.add(json(r, Optional.empty())));
        }
        return "[\n  " + String.join(",\n  ", items) + "\n]\n";
    }

    private static String json(Result r, Optional<Double> ratio) {
        StringBuilder s = new StringBuilder("{");
        s.append("\"workload\":").append(quote(r.workload()));
        s.append(",\"config\":").append(quote(r.config()));
        s.append(",\"workers\":").append(r.workers());
        s.append(",\"variant\":").append(quote(r.variant()));
        s.append(",\"unit\":").append(quote(r.unit()));
        s.append(",\"runs\":")
                .append(r.throughput().stream()
                        .map(Report::number)
                        .toList()
                        .toString()
                        .replace(" ", ""));
        s.append(",\"median\":").append(number(r.median()));
        s.append(",\"min\":").append(number(r.min()));
        s.append(",\"max\":").append(number(r.max()));
        r.p50Millis().ifPresent(v -> s.append(",\"p50_ms\":").append(number(v)));
        r.p99Millis().ifPresent(v -> s.append(",\"p99_ms\":").append(number(v)));
        ratio.ifPresent(v -> s.append(",\"library_over_raw\":").append(number(v)));
        s.append(",\"violations\":").append(r.violations());
        new TreeMap<>(r.extras())
                .forEach((k, v) -> s.append(",").append(quote(k)).append(":").append(number(v)));
        return s.append("}").toString();
    }

    /** Every result as CSV, one line per variant. */
    public String csv() {
        StringBuilder out = new StringBuilder(
                "workload,config,workers,variant,unit,median,min,max,p50_ms,p99_ms,library_over_raw,violations\n");
        for (Row row : rows) {
            csv(out, row.library(), row.ratio());
            row.libraryListened().ifPresent(r -> csv(out, r, row.listenedRatio()));
            row.libraryJdbc().ifPresent(r -> csv(out, r, row.jdbcRatio()));
            row.raw().ifPresent(r -> csv(out, r, Optional.empty()));
            row.pgbench().ifPresent(r -> csv(out, r, Optional.empty()));
            row.plain().ifPresent(r -> csv(out, r, Optional.empty()));
        }
        return out.toString();
    }

    private static void csv(StringBuilder out, Result r, Optional<Double> ratio) {
        out.append(String.join(
                        ",",
                        csvField(r.workload()),
                        csvField(r.config()),
                        Integer.toString(r.workers()),
                        r.variant(),
                        csvField(r.unit()),
                        number(r.median()),
                        number(r.min()),
                        number(r.max()),
                        r.p50Millis().map(Report::number).orElse(""),
                        r.p99Millis().map(Report::number).orElse(""),
                        ratio.map(Report::number).orElse(""),
                        Long.toString(r.violations())))
                .append('\n');
    }

    /**
     * An SVG chart per workload: median throughput (y) against workers (x), one line per config
     * and variant (raw dashed).
     */
    public String svg() {
        Map<String, List<Row>> byWorkload = new LinkedHashMap<>();
        rows.forEach(r -> byWorkload
                .computeIfAbsent(r.library().workload(), k -> new ArrayList<>())
                .add(r));
        int panelW = 520;
        int panelH = 300;
        int cols = 2;
        int panels = byWorkload.size();
        int width = cols * panelW;
        int height = Math.max(1, (panels + cols - 1) / cols) * panelH;
        StringBuilder svg = new StringBuilder(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">%n"
                        + "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n",
                width,
                height));
        String[] colors = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
        int index = 0;
        for (var entry : byWorkload.entrySet()) {
            int ox = (index % cols) * panelW;
            int oy = (index / cols) * panelH;
            index++;
            List<Row> wr = entry.getValue();
            double maxY = wr.stream()
                    .mapToDouble(r -> Math.max(
                            r.library().median(), r.raw().map(Result::median).orElse(0.0)))
                    .max()
                    .orElse(1);
            int maxX = wr.stream().mapToInt(r -> r.library().workers()).max().orElse(1);
            double plotX = ox + 60;
            double plotY = oy + 30;
            double plotW = panelW - 90;
            double plotH = panelH - 80;
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">%s (%s)</text>%n",
                    ox + 10,
                    oy + 18,
                    escape(entry.getKey()),
                    escape(wr.get(0).library().unit())));
            svg.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#999\"/>%n",
                    plotX,
                    plotY,
                    plotW,
                    plotH));
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.0f\" y=\"%.0f\">%,.0f</text><text x=\"%.0f\" y=\"%.0f\">0</text>"
                            + "<text x=\"%.0f\" y=\"%.0f\">workers (log2) 1..%d</text>%n",
                    ox + 2.0,
                    plotY + 10,
                    maxY,
                    ox + 40.0,
                    plotY + plotH,
                    plotX + plotW / 2 - 40,
                    plotY + plotH + 16,
                    maxX));
            Map<String, List<Row>> byConfig = new LinkedHashMap<>();
            wr.forEach(r -> byConfig.computeIfAbsent(r.library().config(), k -> new ArrayList<>())
                    .add(r));
            int line = 0;
            for (var config : byConfig.entrySet()) {
                String color = colors[line % colors.length];
                List<Row> points = config.getValue();
                svg.append(polyline(points, false, color, plotX, plotY, plotW, plotH, maxX, maxY));
                if (points.stream().allMatch(r -> r.raw().isPresent())) {
                    svg.append(polyline(points, true, color, plotX, plotY, plotW, plotH, maxX, maxY));
                }
                svg.append(String.format(
                        Locale.ROOT,
                        "<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">%s</text>%n",
                        plotX + 4,
                        plotY + 14 + 12 * line,
                        color,
                        escape(config.getKey() + " (raw dashed)")));
                line++;
            }
        }
        return svg.append("</svg>\n").toString();
    }

    private static String polyline(
            List<Row> points,
            boolean raw,
            String color,
            double x0,
            double y0,
            double w,
            double h,
            int maxX,
            double maxY) {
        StringBuilder pts = new StringBuilder();
        double logMax = Math.max(1, Math.log(maxX) / Math.log(2));
        for (Row r : points) {
            double value = raw ? r.raw().orElseThrow().median() : r.library().median();
            double x = x0 + (maxX == 1 ? w / 2 : w * (Math.log(r.library().workers()) / Math.log(2)) / logMax);
            double y = y0 + h - (maxY <= 0 ? 0 : h * value / maxY);
            pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        }
        return String.format(
                Locale.ROOT,
                "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
                pts.toString().trim(),
                color,
                raw ? " stroke-dasharray=\"5,4\"" : "");
    }

    private static String number(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.3f", v) : "null";
    }

    private static String quote(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    private static String csvField(String s) {
        return s.contains(",") || s.contains("\"") ? '"' + s.replace("\"", "\"\"") + '"' : s;
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}

package dev.locksmith.dashboard;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Inline SVG charts drawn on the server: no chart library, nothing fetched by the browser. */
final class Chart {

    private static final int WIDTH = 720;
    private static final int HEIGHT = 140;
    private static final int AXIS = 18;

    private Chart() {}

    /**
     * Stacked bars of jobs finished per minute, oldest minute on the left.
     *
     * @param byMinute {done, failed} per minute ago (index 0: the current minute)
     */
    static Html finishedPerMinute(long[][] byMinute, int minutes) {
        long max = 1;
        for (int i = 0; i < minutes && i < byMinute.length; i++) {
            max = Math.max(max, byMinute[i][0] + byMinute[i][1]);
        }
        double slot = (double) WIDTH / minutes;
        double barWidth = Math.max(1, slot - 2);
        double scale = (HEIGHT - AXIS - 4) / (double) max;
        List<Html> bars = new ArrayList<>();
        for (int ago = 0; ago < minutes && ago < byMinute.length; ago++) {
            long done = byMinute[ago][0];
            long failed = byMinute[ago][1];
            double x = WIDTH - (ago + 1) * slot + 1;
            double doneHeight = done * scale;
            double failedHeight = failed * scale;
            double baseline = HEIGHT - AXIS;
            String label = (ago == 0 ? "this minute" : ago + " min ago") + ": " + done + " done, " + failed + " failed";
            bars.add(Html.of(
                    "<g><title>{}</title><rect class=\"done\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
                            + "<rect class=\"failed\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></g>",
                    label,
                    n(x),
                    n(baseline - doneHeight),
                    n(barWidth),
                    n(doneHeight),
                    n(x),
                    n(baseline - doneHeight - failedHeight),
                    n(barWidth),
                    n(failedHeight)));
        }
        return Html.of(
                """
                <svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="jobs finished per minute">\
                <line class="axis" x1="0" y1="{}" x2="{}" y2="{}"/>{}\
                <text x="0" y="{}">{} min ago</text><text x="{}" y="{}" text-anchor="end">now</text>\
                <text x="4" y="12">{} / min</text></svg>\
                <p class="legend"><span class="key done"></span>done <span class="key failed"></span>failed</p>
                """,
                WIDTH,
                HEIGHT,
                HEIGHT - AXIS,
                WIDTH,
                HEIGHT - AXIS,
                Html.join(bars),
                HEIGHT - 4,
                minutes,
                WIDTH,
                HEIGHT - 4,
                max);
    }

    private static String n(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }
}

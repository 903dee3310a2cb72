package dev.locksmith.dashboard;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** How the pages write times, durations and counts. */
final class Format {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'", Locale.ROOT);

    private Format() {}

    /** A database time in UTC, to the second; empty for null. */
    static String time(@Nullable OffsetDateTime time) {
        return time == null ? "" : TIME.format(time.withOffsetSameInstant(ZoneOffset.UTC));
    }

    /** A duration in its two largest units: {@code 850 ms}, {@code 12 s}, {@code 3 min 4 s}, {@code 2 h 5 min}, {@code 3 d 4 h}. */
    static String age(Duration d) {
        boolean negative = d.isNegative();
        Duration a = d.abs();
        String text;
        if (a.compareTo(Duration.ofSeconds(1)) < 0) {
            text = a.toMillis() + " ms";
        } else if (a.compareTo(Duration.ofMinutes(1)) < 0) {
            long tenths = a.toMillis() / 100;
            text = tenths < 100 ? (tenths / 10) + "." + (tenths % 10) + " s" : a.toSeconds() + " s";
        } else if (a.compareTo(Duration.ofHours(1)) < 0) {
            text = a.toMinutes() + " min " + a.toSecondsPart() + " s";
        } else if (a.compareTo(Duration.ofDays(1)) < 0) {
            text = a.toHours() + " h " + a.toMinutesPart() + " min";
        } else {
            text = a.toDays() + " d " + a.toHoursPart() + " h";
        }
        return negative ? "-" + text : text;
    }

    /** A count with thousands separators, and {@code +} when it reached the cap it was counted to. */
    static String count(long n, long cap) {
        return String.format(Locale.ROOT, "%,d", n) + (n >= cap ? "+" : "");
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** The first line of {@code text}, cut to {@code max} characters. */
    static String firstLine(@Nullable String text, int max) {
        if (text == null) {
            return "";
        }
        int nl = text.indexOf('\n');
        String line = nl < 0 ? text : text.substring(0, nl);
        return line.length() > max ? line.substring(0, max) + "…" : line;
    }
}

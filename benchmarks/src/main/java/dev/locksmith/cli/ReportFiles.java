package dev.locksmith.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import org.jspecify.annotations.Nullable;

/** Where a bench subcommand writes its table: {@code --out}, else {@code reports/<name>-<timestamp>}. */
final class ReportFiles {

    private ReportFiles() {}

    /**
     * Writes {@code table} to {@code table.txt} in {@code out}, or in a new directory under
     * {@code reports/} named after {@code name} and the time.
     *
     * @return the directory written to
     */
    static Path writeTable(@Nullable Path out, String name, CharSequence table) throws IOException {
        Path dir = out != null
                ? out
                : Path.of(
                        "reports",
                        name + "-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("table.txt"), table);
        return dir;
    }
}

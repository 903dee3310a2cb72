package dev.locksmith.cli;

import java.io.PrintStream;
import java.util.function.Consumer;

/**
 * A one-line progress bar on a terminal, or one line per step when output is redirected; a step
 * starting with two spaces is a line of its own (a note, or a workload's outcome).
 */
final class Progress implements Consumer<String> {

    private final PrintStream out;
    private final int total;
    private final boolean terminal;
    private int done;

    Progress(PrintStream out, int total) {
        this.out = out;
        this.total = Math.max(1, total);
        this.terminal = System.console() != null;
    }

    @Override
    public void accept(String step) {
        if (step.startsWith("  ")) {
            // a line of its own: on a terminal, over the bar, which the next step draws again
            out.println(terminal ? "\r" + String.format("%-120s", step) : step);
            return;
        }
        done = Math.min(total, done + 1);
        int width = 30;
        int filled = width * done / total;
        String bar = "[" + "#".repeat(filled) + ".".repeat(width - filled) + "] " + done + "/" + total + " " + step;
        if (terminal) {
            out.print("\r" + String.format("%-120s", bar));
        } else {
            out.println(bar);
        }
    }

    void finish() {
        if (terminal) {
            out.println();
        }
    }
}

package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.JobControl;
import org.jspecify.annotations.Nullable;

/** Finding a handler's {@link JobControl} in what it threw. */
final class Controls {

    private static final int MAX_CAUSES = 10;

    private Controls() {}

    /**
     * The control in {@code thrown}'s cause chain, if any: the first one found, looking through at
     * most ten causes.
     */
    static @Nullable JobControl find(Throwable thrown) {
        Throwable t = thrown;
        for (int depth = 0; t != null && depth < MAX_CAUSES; depth++) {
            if (t instanceof JobControl control) {
                return control;
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return null;
    }
}

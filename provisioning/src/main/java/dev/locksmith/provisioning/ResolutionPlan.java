package dev.locksmith.provisioning;

import java.util.List;
import java.util.function.BooleanSupplier;

/** Decides which sources to try, in order. Pure logic, so it is unit-tested without a server. */
final class ResolutionPlan {

    private ResolutionPlan() {}

    /**
     * The sources to try, first to last.
     *
     * <ul>
     *   <li>An explicit URL is used alone: whoever names a server wants that server, and a
     *       silent fallback would hide a typo or an outage.</li>
     *   <li>A forced source is used alone.</li>
     *   <li>Otherwise Testcontainers when Docker answers, then embedded.</li>
     * </ul>
     *
     * @param dockerAvailable asked only when the answer matters (it can take a moment)
     */
    static List<Source> plan(ServerSettings settings, BooleanSupplier dockerAvailable) {
        if (settings.forced().isPresent()) {
            Source forced = settings.forced().get();
            if (forced == Source.EXPLICIT && settings.jdbcUrl().isEmpty()) {
                throw new IllegalArgumentException(
                        "locksmith.db.source=explicit needs LOCKSMITH_JDBC_URL or -Dlocksmith.jdbc.url");
            }
            return List.of(forced);
        }
        if (settings.jdbcUrl().isPresent()) {
            return List.of(Source.EXPLICIT);
        }
        return dockerAvailable.getAsBoolean()
                ? List.of(Source.TESTCONTAINERS, Source.EMBEDDED)
                : List.of(Source.EMBEDDED);
    }
}

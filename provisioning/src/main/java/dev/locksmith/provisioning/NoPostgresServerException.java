package dev.locksmith.provisioning;

import java.util.List;

/** No PostgreSQL server could be obtained by any of the three ways. */
public final class NoPostgresServerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NoPostgresServerException(List<String> failures) {
        super(message(failures));
    }

    private static String message(List<String> failures) {
        StringBuilder text = new StringBuilder("No PostgreSQL server could be obtained.");
        for (String failure : failures) {
            text.append("\n  tried ").append(failure);
        }
        text.append("\nlocksmith obtains PostgreSQL in one of three ways:")
                .append("\n  1. ")
                .append(Source.EXPLICIT.description())
                .append(", with LOCKSMITH_JDBC_USER / LOCKSMITH_JDBC_PASSWORD alongside")
                .append("\n  2. ")
                .append(Source.TESTCONTAINERS.description())
                .append("\n  3. ")
                .append(Source.EMBEDDED.description())
                .append(", the default when nothing else is given");
        return text.toString();
    }
}

package dev.locksmith.cli;

import dev.locksmith.provisioning.NoPostgresServerException;
import java.sql.SQLException;
import java.util.Optional;

/**
 * Turns the failures a user can fix (server unreachable, wrong user or password, no such
 * database, no PostgreSQL at all) into one line instead of a stack trace.
 */
final class Failures {

    /** Exit status for "could not get a working connection". */
    static final int CONNECTION_FAILED = 2;

    private Failures() {}

    /** A one-line explanation when {@code failure} is a connection problem, else empty. */
    static Optional<String> connectionProblem(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof NoPostgresServerException) {
                return Optional.of(t.getMessage());
            }
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                String state = sql.getSQLState();
                if (state.startsWith("08")) {
                    return Optional.of("cannot connect to PostgreSQL: " + sql.getMessage());
                }
                if (state.equals("28P01")) {
                    return Optional.of("PostgreSQL refused the password: " + sql.getMessage()
                            + " (check --user/--password or LOCKSMITH_JDBC_USER/LOCKSMITH_JDBC_PASSWORD)");
                }
                if (state.startsWith("28")) {
                    return Optional.of("PostgreSQL refused the login: " + sql.getMessage()
                            + " (check --user/--password or LOCKSMITH_JDBC_USER/LOCKSMITH_JDBC_PASSWORD)");
                }
                if (state.equals("3D000")) {
                    return Optional.of("no such database: " + sql.getMessage() + " (check --url)");
                }
            }
        }
        return Optional.empty();
    }
}

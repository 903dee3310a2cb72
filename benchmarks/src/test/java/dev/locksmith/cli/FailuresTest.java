package dev.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

class FailuresTest {

    @Test
    void connectionProblemsBecomeOneLineAndEverythingElseIsLeftAlone() {
        assertThat(Failures.connectionProblem(new RuntimeException(
                        "wrapped", new SQLException("Connection to 127.0.0.1:5999 refused.", "08001"))))
                .hasValueSatisfying(
                        m -> assertThat(m).startsWith("cannot connect").contains("5999"));
        assertThat(Failures.connectionProblem(new SQLException("FATAL: password authentication failed", "28P01")))
                .hasValueSatisfying(
                        m -> assertThat(m).contains("refused the password").contains("--password"));
        assertThat(Failures.connectionProblem(new SQLException("FATAL: role \"x\" does not exist", "28000")))
                .hasValueSatisfying(m -> assertThat(m).contains("refused the login"));
        assertThat(Failures.connectionProblem(new SQLException("FATAL: database \"nope\" does not exist", "3D000")))
                .hasValueSatisfying(m -> assertThat(m).contains("no such database"));
        assertThat(Failures.connectionProblem(new SQLException("deadlock detected", "40P01")))
                .isEmpty();
        assertThat(Failures.connectionProblem(new IllegalStateException("bug"))).isEmpty();
    }
}

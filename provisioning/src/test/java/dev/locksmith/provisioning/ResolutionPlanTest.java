package dev.locksmith.provisioning;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

class ResolutionPlanTest {

    private static ServerSettings settings(Map<String, String> env, String... properties) {
        Properties p = new Properties();
        for (int i = 0; i < properties.length; i += 2) {
            p.setProperty(properties[i], properties[i + 1]);
        }
        return ServerSettings.from(env, p);
    }

    private static BooleanSupplier docker(boolean available, AtomicInteger asked) {
        return () -> {
            asked.incrementAndGet();
            return available;
        };
    }

    @Test
    void explicitUrlIsUsedAloneAndDockerIsNotAsked() {
        AtomicInteger asked = new AtomicInteger();
        ServerSettings s = settings(Map.of(
                "LOCKSMITH_JDBC_URL",
                "jdbc:postgresql://db:5432/postgres",
                "LOCKSMITH_JDBC_USER",
                "app",
                "LOCKSMITH_JDBC_PASSWORD",
                "secret"));
        assertThat(ResolutionPlan.plan(s, docker(true, asked))).containsExactly(Source.EXPLICIT);
        assertThat(asked).hasValue(0);
        assertThat(s.user()).isEqualTo("app");
        assertThat(s.password()).isEqualTo("secret");
    }

    @Test
    void systemPropertyWinsOverEnvironment() {
        ServerSettings s = settings(
                Map.of("LOCKSMITH_JDBC_URL", "jdbc:postgresql://env/x"),
                "locksmith.jdbc.url",
                "jdbc:postgresql://prop/y");
        assertThat(s.jdbcUrl()).contains("jdbc:postgresql://prop/y");
        assertThat(s.user()).isEqualTo("postgres");
    }

    @Test
    void dockerFirstThenEmbedded() {
        assertThat(ResolutionPlan.plan(settings(Map.of()), docker(true, new AtomicInteger())))
                .containsExactly(Source.TESTCONTAINERS, Source.EMBEDDED);
        assertThat(ResolutionPlan.plan(settings(Map.of()), docker(false, new AtomicInteger())))
                .containsExactly(Source.EMBEDDED);
    }

    @Test
    void forcedSourceIsUsedAlone() {
        assertThat(ResolutionPlan.plan(
                        settings(Map.of("LOCKSMITH_DB_SOURCE", "Embedded")), docker(true, new AtomicInteger())))
                .isEqualTo(List.of(Source.EMBEDDED));
        assertThatThrownBy(() -> ResolutionPlan.plan(
                        settings(Map.of("LOCKSMITH_DB_SOURCE", "explicit")), docker(true, new AtomicInteger())))
                .hasMessageContaining("LOCKSMITH_JDBC_URL");
        assertThatThrownBy(() -> settings(Map.of("LOCKSMITH_DB_SOURCE", "h2")))
                .hasMessageContaining("explicit, testcontainers, embedded");
    }

    @Test
    void rejectsNonPostgresUrls() {
        assertThatThrownBy(() -> settings(Map.of("LOCKSMITH_JDBC_URL", "jdbc:h2:mem:x")))
                .hasMessageContaining("jdbc:postgresql:");
    }

    @Test
    void unreachableExplicitServerFailsAtOnceNamingAllThreeWays() {
        ServerSettings s =
                settings(Map.of("LOCKSMITH_JDBC_URL", "jdbc:postgresql://127.0.0.1:1/postgres?connectTimeout=2"));
        assertThatThrownBy(() -> PostgresServer.start(s, () -> false))
                .isInstanceOf(NoPostgresServerException.class)
                .hasMessageContaining("127.0.0.1:1")
                .hasMessageContaining(Source.EXPLICIT.description())
                .hasMessageContaining(Source.TESTCONTAINERS.description())
                .hasMessageContaining(Source.EMBEDDED.description());
    }

    @Test
    void scratchNamesAreSafeIdentifiers() {
        assertThat(ScratchDatabases.sanitize("My Test-Class")).isEqualTo("my_test_class");
        assertThat(ScratchDatabases.sanitize("1abc")).isEqualTo("db_1abc");
        assertThat(ScratchDatabases.sanitize("x\"; DROP DATABASE y; --")).matches("[a-z0-9_]+");
    }
}

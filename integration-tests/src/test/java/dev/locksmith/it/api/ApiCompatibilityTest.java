package dev.locksmith.it.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.dashboard.Dashboard;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.micrometer.LocksmithMetrics;
import dev.locksmith.opentelemetry.LocksmithTracing;
import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.schema.LocksmithSchema;
import dev.locksmith.spring.LocksmithAutoConfiguration;
import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Guards the public API of the published library modules against incompatible change. Each
 * module's API is recorded in {@code <module>/api/locksmith-<module>.api} (one line per type and
 * public or protected member, see {@link ApiSignatures}); this test compares the compiled
 * classes with it:
 *
 * <ul>
 *   <li>a recorded line that is gone (a member removed, or its signature changed) fails as an
 *       <b>incompatible</b> change;</li>
 *   <li>new lines fail until recorded, so that every API change shows up in review:
 *       {@code mvn verify -Dlocksmith.api.update=true} records additions;</li>
 *   <li>recording a removal needs {@code -Dlocksmith.api.acceptBreaking=true} as well: a
 *       deliberate break, for a new major version (or, before 1.0, a minor one).</li>
 * </ul>
 *
 * <p>At a release the files hold that release's API, so the check compares later work against
 * the previous release.
 */
class ApiCompatibilityTest {

    private static final boolean UPDATE = Boolean.getBoolean("locksmith.api.update");
    private static final boolean ACCEPT_BREAKING = Boolean.getBoolean("locksmith.api.acceptBreaking");

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "core",
                "schema",
                "provisioning",
                "micrometer",
                "dashboard",
                "opentelemetry",
                "spring-boot-starter"
            })
    void thePublicApiIsTheRecordedOne(String module) throws Exception {
        Set<String> current = ApiSignatures.of(root(module), getClass().getClassLoader());
        Path file = Path.of("..", module, "api", "locksmith-" + module + ".api");
        Set<String> recorded = Files.exists(file) ? new TreeSet<>(Files.readAllLines(file)) : Set.of();
        List<String> removed = ApiSignatures.removed(recorded, current);
        List<String> added = ApiSignatures.removed(current, recorded);
        if (UPDATE && (removed.isEmpty() || ACCEPT_BREAKING)) {
            Files.createDirectories(file.getParent());
            Files.write(file, current);
            return;
        }
        assertThat(removed)
                .as(
                        "INCOMPATIBLE change to the public API of locksmith-%s: these recorded signatures "
                                + "are gone or changed (%s). Restore them, or, for a deliberate break, run with "
                                + "-Dlocksmith.api.update=true -Dlocksmith.api.acceptBreaking=true",
                        module, file)
                .isEmpty();
        assertThat(added)
                .as(
                        "The public API of locksmith-%s grew; record it with -Dlocksmith.api.update=true (%s)",
                        module, file)
                .isEmpty();
    }

    @Test
    void aBrokenCopyOfALibraryIsReportedAsIncompatibleAndAnExtendedOneIsNot(@TempDir Path dir) throws Exception {
        String v1 = """
                package lib;
                public final class Queue {
                    public long enqueue(String job) { return 1; }
                    public void close() { }
                }
                """;
        String broken = """
                package lib;
                public final class Queue {
                    public int enqueue(String job) { return 1; }
                }
                """;
        String extended = """
                package lib;
                public final class Queue {
                    public long enqueue(String job) { return 1; }
                    public long enqueue(String job, int priority) { return 1; }
                    public void close() { }
                }
                """;
        Set<String> before = api(dir.resolve("v1"), v1);
        assertThat(ApiSignatures.removed(before, api(dir.resolve("broken"), broken)))
                .containsExactly(
                        "lib.Queue | public long lib.Queue.enqueue(java.lang.String)",
                        "lib.Queue | public void lib.Queue.close()");
        assertThat(ApiSignatures.removed(before, api(dir.resolve("extended"), extended)))
                .isEmpty();
    }

    @Test
    void internalsAndNonPublicMembersAreNotApi() throws Exception {
        Set<String> core = ApiSignatures.of(root("core"), getClass().getClassLoader());
        assertThat(core)
                .noneMatch(line -> line.startsWith("dev.locksmith.internal."))
                .noneMatch(line -> line.contains("Sleeper"))
                .anyMatch(line -> line.equals("dev.locksmith.jobs.JobQueue | public dev.locksmith.jobs.JobQueue("
                        + "org.jooq.DSLContext,dev.locksmith.jobs.JobQueueConfig)"));
    }

    private static Path root(String module) throws Exception {
        Class<?> representative = switch (module) {
            case "core" -> JobQueue.class;
            case "schema" -> LocksmithSchema.class;
            case "provisioning" -> PostgresServer.class;
            case "opentelemetry" -> LocksmithTracing.class;
            case "micrometer" -> LocksmithMetrics.class;
            case "dashboard" -> Dashboard.class;
            case "spring-boot-starter" -> LocksmithAutoConfiguration.class;
            default -> throw new IllegalArgumentException(module);
        };
        return Path.of(representative
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
    }

    /** Compiles {@code source} (one class, {@code lib.Queue}) into {@code dir} and reads its API. */
    private static Set<String> api(Path dir, String source) throws Exception {
        Path src = Files.createDirectories(dir.resolve("src/lib")).resolve("Queue.java");
        Files.writeString(src, source);
        Path out = Files.createDirectories(dir.resolve("classes"));
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        List<String> args = new ArrayList<>(List.of("-d", out.toString(), src.toString()));
        int exit =
                ToolProvider.getSystemJavaCompiler().run(null, diagnostics, diagnostics, args.toArray(String[]::new));
        assertThat(exit).as(diagnostics.toString(StandardCharsets.UTF_8)).isZero();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {out.toUri().toURL()}, null)) {
            return ApiSignatures.of(out, loader);
        }
    }
}

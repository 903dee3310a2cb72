package dev.locksmith.it.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.locksmith.codegen.tables.JobsTable;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.micrometer.LocksmithMetrics;
import dev.locksmith.opentelemetry.LocksmithTracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.context.Context;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application that is a JPMS module and {@code requires dev.locksmith.core} compiles against
 * the API, and cannot reach {@code dev.locksmith.internal}: javac, given the same module path a
 * user's build would have (core, codegen, jOOQ, JSpecify and their dependencies), accepts the one
 * and refuses the other for the right reason. JSpecify is there because core requires it
 * {@code static transitive}: the API's nullness annotations must resolve when an application
 * module compiles (Maven brings the jar, a compile dependency of core), not when it runs. An
 * application module can also require {@code dev.locksmith.opentelemetry} and
 * {@code dev.locksmith.micrometer}, the names those jars declare (Automatic-Module-Name; neither
 * Micrometer nor OpenTelemetry ships a module descriptor).
 */
class ModuleBoundaryTest {

    private static final String MODULE_INFO = """
            module com.example.app {
                requires dev.locksmith.core;
            }
            """;

    @TempDir
    Path dir;

    @Test
    void anApplicationModuleCompilesAgainstTheApi() throws Exception {
        String out = compile("""
                package com.example.app;

                import dev.locksmith.RetryPolicy;
                import dev.locksmith.exception.TransientLocksmithException;
                import dev.locksmith.accounts.Accounts;
                import dev.locksmith.jobs.JobQueue;
                import dev.locksmith.jobs.NewJob;
                import org.jooq.DSLContext;

                public final class App {
                    public static long run(DSLContext dsl) {
                        Accounts accounts = new Accounts(dsl, RetryPolicy.builder().maxAttempts(3).build());
                        try {
                            return new JobQueue(dsl).enqueue(dsl, NewJob.of("mail", "welcome"));
                        } catch (TransientLocksmithException e) {
                            return -1;
                        }
                    }
                }
                """);
        assertThat(out).isEmpty();
    }

    @Test
    void anApplicationModuleCannotReachTheInternalPackage() throws Exception {
        String out = compile("""
                package com.example.app;

                import dev.locksmith.internal.Errors;

                public final class App {
                    public static Object reach() {
                        return Errors.class;
                    }
                }
                """);
        assertThat(out)
                .contains("package dev.locksmith.internal is not visible")
                .contains("is declared in module dev.locksmith.core, which does not export it");
    }

    @Test
    void anApplicationModuleRequiresTheOpenTelemetryModuleByItsName() throws Exception {
        Path jar = location(LocksmithTracing.class);
        // Its module name is the jar's Automatic-Module-Name; the classes directory has none.
        assumeTrue(Files.isRegularFile(jar), "locksmith-opentelemetry is packaged (a verify run), not " + jar);
        String out = compile("""
                module com.example.app {
                    requires dev.locksmith.core;
                    requires dev.locksmith.opentelemetry;
                    requires io.opentelemetry.api;
                }
                """, """
                package com.example.app;

                import dev.locksmith.Locksmith;
                import dev.locksmith.opentelemetry.LocksmithTracing;
                import io.opentelemetry.api.OpenTelemetry;
                import org.jooq.DSLContext;

                public final class App {
                    public static Locksmith traced(DSLContext dsl, OpenTelemetry openTelemetry) {
                        return Locksmith.builder(dsl).observer(LocksmithTracing.create(openTelemetry)).build();
                    }
                }
                """, Stream.of(LocksmithTracing.class, OpenTelemetry.class, Context.class));
        assertThat(out).isEmpty();
    }

    @Test
    void anApplicationModuleRequiresTheMicrometerModuleByItsAutomaticName() throws Exception {
        Path jar = location(LocksmithMetrics.class);
        // Its module name is the jar's Automatic-Module-Name; the classes directory has none.
        assumeTrue(Files.isRegularFile(jar), "locksmith-micrometer is packaged (a verify run), not " + jar);
        String out = compile(
                """
                module com.example.app {
                    requires dev.locksmith.core;
                    requires dev.locksmith.micrometer;
                    requires micrometer.core;
                }
                """,
                """
                package com.example.app;

                import dev.locksmith.Locksmith;
                import dev.locksmith.jobs.JobQueue;
                import dev.locksmith.micrometer.LocksmithMetrics;
                import dev.locksmith.micrometer.QueueDepthMetrics;
                import io.micrometer.core.instrument.MeterRegistry;
                import java.util.List;
                import org.jooq.DSLContext;

                public final class App {
                    public static JobQueue observed(DSLContext dsl, MeterRegistry registry) {
                        LocksmithMetrics metrics = new LocksmithMetrics();
                        metrics.bindTo(registry);
                        JobQueue queue = new JobQueue(Locksmith.builder(dsl).observer(metrics).build());
                        QueueDepthMetrics.builder(queue, List.of("mail")).build().bindTo(registry);
                        return queue;
                    }
                }
                """,
                Stream.of(
                        LocksmithMetrics.class,
                        MeterRegistry.class,
                        io.micrometer.common.KeyValue.class,
                        io.micrometer.observation.Observation.class));
        assertThat(out).isEmpty();
    }

    /** Compiles the module and its one class; returns javac's diagnostics (empty on success). */
    private String compile(String app) throws IOException, URISyntaxException {
        return compile(MODULE_INFO, app, Stream.of());
    }

    /**
     * Compiles {@code moduleInfo} and its one class, with the jars of {@code more} on the module
     * path as well; returns javac's diagnostics (empty on success).
     */
    private String compile(String moduleInfo, String app, Stream<Class<?>> more)
            throws IOException, URISyntaxException {
        Path src = dir.resolve("src");
        Files.createDirectories(src.resolve("com/example/app"));
        Files.writeString(src.resolve("module-info.java"), moduleInfo);
        Files.writeString(src.resolve("com/example/app/App.java"), app);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        // An empty class path: javac would otherwise take this JVM's, where core is in the unnamed module.
        Path emptyClassPath = Files.createDirectories(dir.resolve("empty"));
        int exit = javac.run(
                null,
                diagnostics,
                diagnostics,
                "-d",
                dir.resolve("out").toString(),
                "--class-path",
                emptyClassPath.toString(),
                "--module-path",
                modulePath(more),
                src.resolve("module-info.java").toString(),
                src.resolve("com/example/app/App.java").toString());
        String out = diagnostics.toString(StandardCharsets.UTF_8);
        assertThat(exit == 0).as(out).isEqualTo(out.isEmpty());
        return out;
    }

    /**
     * Where the classes of core, codegen, jOOQ, JSpecify and the libraries they require (cron-utils among them) come
     * from, and those of {@code more}.
     */
    private static String modulePath(Stream<Class<?>> more) throws URISyntaxException {
        Stream<Class<?>> representatives = Stream.concat(
                more,
                Stream.of(
                        JobQueue.class,
                        JobsTable.class,
                        DSLContext.class,
                        org.postgresql.Driver.class,
                        org.slf4j.Logger.class,
                        com.cronutils.model.Cron.class,
                        io.r2dbc.spi.ConnectionFactory.class,
                        org.reactivestreams.Publisher.class,
                        org.jspecify.annotations.NullMarked.class));
        StringBuilder path = new StringBuilder();
        for (Class<?> c : representatives.collect(Collectors.toList())) {
            if (path.length() > 0) {
                path.append(java.io.File.pathSeparatorChar);
            }
            path.append(location(c));
        }
        return path.toString();
    }

    private static Path location(Class<?> c) throws URISyntaxException {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}

package dev.locksmith.compat;

import dev.locksmith.provisioning.ScratchDatabase;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * Runs {@code liquibase update} on the locksmith changelog as the stock command line does
 * ({@code liquibase.integration.commandline.LiquibaseCommandLine}, the class the {@code liquibase}
 * script starts), in a JVM of its own with one {@link LiquibaseDistribution} on the class path,
 * so that versions never share a class loader. Each run gets an empty working directory (no
 * {@code liquibase.properties} is picked up), no {@code LIQUIBASE_*} environment variables, and
 * leaves its output in {@code target/liquibase-runs}.
 */
final class ForkedLiquibase {

    /** The master changelog, as users name it. */
    static final String CHANGELOG = "db/locksmith/changelog.xml";

    /** The system property (set by this module's pom) naming the locksmith-schema jar under test. */
    static final String SCHEMA_JAR_PROPERTY = "locksmith.compat.schema-jar";

    private static final String MAIN = "liquibase.integration.commandline.LiquibaseCommandLine";
    private static final long TIMEOUT_SECONDS = 120;
    private static final AtomicInteger RUNS = new AtomicInteger();
    private static final Path RUNS_DIRECTORY = Path.of(System.getProperty("basedir", "."), "target", "liquibase-runs");
    private static Path schemaJar;

    static {
        deleteEarlierRuns();
    }

    /** How the changelog reaches Liquibase. */
    enum Route {
        /** The schema jar on the JVM's class path: how Spring Boot and the Maven plugin find it. */
        CLASSPATH,
        /** {@code --search-path=<schema jar>}: the README's command line. */
        SEARCH_PATH
    }

    /**
     * What one run printed, and how it ended.
     *
     * @param command the command line, password hidden
     * @param exitCode the process's exit code
     * @param output standard output and error, interleaved
     */
    record Run(String command, int exitCode, String output) {

        /** This run, after checking that it succeeded; otherwise fails with everything it printed. */
        Run succeeded() {
            if (exitCode != 0) {
                throw new AssertionError("Liquibase exited with " + exitCode + ":\n  " + command + "\n" + output);
            }
            return this;
        }
    }

    private ForkedLiquibase() {}

    /**
     * The locksmith-schema jar under test, as Maven packaged it; in a build that stops before
     * {@code package} ({@code mvn test}) Maven hands over the module's classes directory instead,
     * which is packed into a jar of the same content here.
     */
    static synchronized Path schemaJar() {
        if (schemaJar == null) {
            String artifact = System.getProperty(SCHEMA_JAR_PROPERTY);
            if (artifact == null || !Files.exists(Path.of(artifact))) {
                throw new IllegalStateException(SCHEMA_JAR_PROPERTY + " is " + artifact + ", not the locksmith-schema "
                        + "artifact: run these tests through Maven (mvn verify -pl liquibase-compat -am)");
            }
            schemaJar = Files.isDirectory(Path.of(artifact)) ? pack(Path.of(artifact)) : Path.of(artifact);
        }
        return schemaJar;
    }

    private static Path pack(Path classes) {
        try {
            Path jar = Files.createDirectories(RUNS_DIRECTORY).resolve("locksmith-schema.jar");
            try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
                    Stream<Path> files = Files.walk(classes)) {
                for (Path file :
                        (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
                    out.putNextEntry(
                            new JarEntry(classes.relativize(file).toString().replace(File.separatorChar, '/')));
                    Files.copy(file, out);
                    out.closeEntry();
                }
            }
            return jar;
        } catch (IOException e) {
            throw new UncheckedIOException("could not pack " + classes + " into a jar", e);
        }
    }

    /**
     * Runs {@code update} of the master changelog with {@code liquibase} on {@code database},
     * the changelog reached by {@code route}; {@code arguments} follow the command (for example
     * {@code -Dlocksmith.schema=custom_locks}, a changelog parameter).
     */
    static Run update(LiquibaseDistribution liquibase, Route route, ScratchDatabase database, String... arguments) {
        Path jar = schemaJar();
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // A run lasts about two seconds: C1 alone and the serial collector roughly halve it.
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        command.add("-cp");
        command.add(
                route == Route.CLASSPATH ? liquibase.classpath() + File.pathSeparator + jar : liquibase.classpath());
        command.add(MAIN);
        if (route == Route.SEARCH_PATH) {
            command.add("--search-path=" + jar);
        }
        command.add("--changelog-file=" + CHANGELOG);
        command.add("--url=" + database.jdbcUrl());
        command.add("--username=" + database.user());
        if (database.password() != null) {
            command.add("--password=" + database.password());
        }
        if (liquibase.hasAnalytics()) {
            command.add("--analytics-enabled=false");
        }
        command.add("update");
        command.addAll(List.of(arguments));
        return run(liquibase, command, database.password());
    }

    /**
     * Runs {@link MigrateTwice} (two {@code LocksmithSchema.migrate} calls, as a service starting
     * twice) in a JVM of its own with {@code liquibase}'s jars, the schema jar and SLF4J's simple
     * binding, which writes to {@code slf4jLog} (Liquibase's loggers at DEBUG, the rest at INFO),
     * so that the run's own output is what was printed.
     */
    static Run migrateTwice(LiquibaseDistribution liquibase, ScratchDatabase database, Path slf4jLog) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        command.add("-Dorg.slf4j.simpleLogger.logFile=" + slf4jLog);
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=info");
        command.add("-Dorg.slf4j.simpleLogger.log.liquibase=debug");
        command.add("-Dorg.slf4j.simpleLogger.showThreadName=false");
        command.add("-cp");
        command.add(String.join(
                File.pathSeparator,
                liquibase.classpath(),
                schemaJar().toString(),
                location(org.slf4j.LoggerFactory.class),
                location(org.slf4j.simple.SimpleLogger.class),
                location(MigrateTwice.class)));
        command.add(MigrateTwice.class.getName());
        command.add(database.jdbcUrl());
        command.add(database.user());
        if (database.password() != null) {
            command.add(database.password());
        }
        return run(liquibase, command, database.password());
    }

    /** The jar or directory {@code type} was loaded from. */
    private static String location(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException("where was " + type + " loaded from?", e);
        }
    }

    private static Run run(LiquibaseDistribution liquibase, List<String> command, String password) {
        String shown = String.join(" ", command);
        if (password != null && !password.isEmpty()) {
            shown = shown.replace(password, "***");
        }
        try {
            Path runs = Files.createDirectories(RUNS_DIRECTORY);
            Path workingDirectory = Files.createTempDirectory(
                    runs, String.format("%02d-liquibase-%s-", RUNS.incrementAndGet(), liquibase.version()));
            Path log = workingDirectory.resolve("output.txt");
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(workingDirectory.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            builder.environment().keySet().removeIf(name -> name.startsWith("LIQUIBASE_"));
            Process process = builder.start();
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
                throw new AssertionError(
                        "Liquibase did not finish within " + TIMEOUT_SECONDS + " s:\n  " + shown + "\n" + read(log));
            }
            return new Run(shown, process.exitValue(), read(log));
        } catch (IOException e) {
            throw new UncheckedIOException("could not run " + shown, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + shown, e);
        }
    }

    /** Earlier test runs' output would be mistaken for this run's. */
    private static void deleteEarlierRuns() {
        if (!Files.isDirectory(RUNS_DIRECTORY)) {
            return;
        }
        try (Stream<Path> files = Files.walk(RUNS_DIRECTORY)) {
            for (Path file : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not delete " + RUNS_DIRECTORY, e);
        }
    }

    /** Leniently: the output is for people, in whatever encoding the child JVM chose. */
    private static String read(Path log) throws IOException {
        return new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
    }
}

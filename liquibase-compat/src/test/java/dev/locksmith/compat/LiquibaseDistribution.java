package dev.locksmith.compat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The jars of one stock Liquibase command line: liquibase-core with its own runtime
 * dependencies, picocli and the PostgreSQL driver, as a module under
 * {@code liquibase-compat/distributions} copied them into its {@code target/liquibase}.
 *
 * @param version the liquibase-core version, read from its jar's name
 * @param directory the directory holding the jars
 */
record LiquibaseDistribution(String version, Path directory) {

    /** The system property (set by this module's pom) listing the distribution directories. */
    static final String DIRECTORIES_PROPERTY = "locksmith.compat.liquibase";

    private static final String CORE_JAR_PREFIX = "liquibase-core-";

    /** Every distribution the build prepared, in the order the pom lists them (oldest first). */
    static List<LiquibaseDistribution> configured() {
        String directories = System.getProperty(DIRECTORIES_PROPERTY);
        if (directories == null || directories.isBlank()) {
            throw new IllegalStateException(DIRECTORIES_PROPERTY + " is not set: run these tests through Maven "
                    + "(mvn verify -pl liquibase-compat -am)");
        }
        return Arrays.stream(directories.split(","))
                .map(String::trim)
                .map(Path::of)
                .map(LiquibaseDistribution::in)
                .collect(Collectors.toUnmodifiableList());
    }

    /** The distribution whose liquibase-core is {@code version}. */
    static LiquibaseDistribution version(String version) {
        return configured().stream()
                .filter(d -> d.version().equals(version))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no Liquibase " + version + " among " + configured()));
    }

    private static LiquibaseDistribution in(Path directory) {
        try (Stream<Path> files = Files.list(directory)) {
            List<String> cores = files.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith(CORE_JAR_PREFIX) && n.endsWith(".jar"))
                    .collect(Collectors.toList());
            if (cores.size() != 1) {
                throw new IllegalStateException("expected one liquibase-core jar in " + directory + ", found " + cores
                        + ": run mvn clean verify -pl liquibase-compat -am");
            }
            String jar = cores.get(0);
            return new LiquibaseDistribution(
                    jar.substring(CORE_JAR_PREFIX.length(), jar.length() - ".jar".length()), directory);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "no Liquibase distribution in " + directory
                            + " (the distribution modules copy it in generate-resources): " + e.getMessage(),
                    e);
        }
    }

    /** The {@code -cp} entry for every jar of this distribution. */
    String classpath() {
        return directory.resolve("*").toString();
    }

    /**
     * Whether this Liquibase sends usage analytics (4.30 and later), and so has, and needs,
     * {@code --analytics-enabled=false}; older ones reject the option as unknown.
     */
    boolean hasAnalytics() {
        try (JarFile core = new JarFile(
                directory.resolve(CORE_JAR_PREFIX + version + ".jar").toFile())) {
            return core.getEntry("liquibase/analytics/configuration/AnalyticsArgs.class") != null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return version;
    }
}

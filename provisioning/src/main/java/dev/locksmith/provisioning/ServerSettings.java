package dev.locksmith.provisioning;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * What the environment says about which PostgreSQL to use. System properties win over
 * environment variables, so one Maven or java invocation can override a shell's setting.
 *
 * <table>
 *   <caption>Recognised settings</caption>
 *   <tr><th>Environment</th><th>System property</th><th>Meaning</th></tr>
 *   <tr><td>LOCKSMITH_JDBC_URL</td><td>locksmith.jdbc.url</td>
 *       <td>JDBC URL of an existing server; its database is used only to create and drop
 *       scratch databases</td></tr>
 *   <tr><td>LOCKSMITH_JDBC_USER</td><td>locksmith.jdbc.user</td><td>user (default postgres)</td></tr>
 *   <tr><td>LOCKSMITH_JDBC_PASSWORD</td><td>locksmith.jdbc.password</td><td>password (default none)</td></tr>
 *   <tr><td>LOCKSMITH_DB_SOURCE</td><td>locksmith.db.source</td>
 *       <td>force one source: explicit, testcontainers or embedded</td></tr>
 *   <tr><td>LOCKSMITH_PG_VERSION</td><td>locksmith.pg.version</td>
 *       <td>the PostgreSQL major version (13 or later): embedded PostgreSQL runs that major's pinned
 *       binaries, Testcontainers the {@code postgres:<major>-alpine} image, and an explicit server
 *       must be that major (the run fails otherwise, rather than test another version than asked);
 *       unset: the embedded binaries on the class path (17), {@code postgres:17-alpine}, any
 *       explicit server</td></tr>
 * </table>
 *
 * @param jdbcUrl the explicit server's URL, if one was given
 * @param user the user for the explicit server
 * @param password the password for the explicit server, or null
 * @param forced a source the user insists on, if any
 * @param postgresVersion the PostgreSQL major version to run or insist on, if one was given
 */
public record ServerSettings(
        Optional<String> jdbcUrl,
        String user,
        @Nullable String password,
        Optional<Source> forced,
        OptionalInt postgresVersion) {

    /** The oldest PostgreSQL major locksmith supports ({@code pg_current_xact_id()} is 13's). */
    static final int OLDEST_MAJOR = 13;

    /**
     * Checks that nothing but {@code password} is null, and that a requested major version is one
     * locksmith supports.
     *
     * @param jdbcUrl the explicit server's URL, if one was given
     * @param user the user for the explicit server
     * @param password the password for the explicit server, or null
     * @param forced a source the user insists on, if any
     * @param postgresVersion the PostgreSQL major version to run or insist on, if one was given
     * @throws IllegalArgumentException for a major version older than 13
     */
    public ServerSettings {
        Objects.requireNonNull(jdbcUrl, "jdbcUrl");
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(forced, "forced");
        Objects.requireNonNull(postgresVersion, "postgresVersion");
        if (postgresVersion.isPresent() && postgresVersion.getAsInt() < OLDEST_MAJOR) {
            throw new IllegalArgumentException("postgresVersion must be " + OLDEST_MAJOR
                    + " or later (locksmith supports PostgreSQL 13 to 18), was " + postgresVersion.getAsInt());
        }
    }

    /** {@return the settings of this process: its environment and system properties} */
    public static ServerSettings fromEnvironment() {
        return from(System.getenv(), System.getProperties());
    }

    /**
     * Reads settings from the given environment and system properties; a property wins over
     * the environment variable of the same setting, and a blank value counts as unset.
     *
     * @param env environment variables, such as {@link System#getenv()}
     * @param properties system properties, such as {@link System#getProperties()}
     * @return the settings
     * @throws IllegalArgumentException for a URL that is not {@code jdbc:postgresql:}, an unknown
     *     source, or a PostgreSQL version that is not a major version number of 13 or later
     */
    public static ServerSettings from(Map<String, String> env, Properties properties) {
        Optional<String> url = read(env, properties, "LOCKSMITH_JDBC_URL", "locksmith.jdbc.url");
        String user = read(env, properties, "LOCKSMITH_JDBC_USER", "locksmith.jdbc.user")
                .orElse("postgres");
        String password = read(env, properties, "LOCKSMITH_JDBC_PASSWORD", "locksmith.jdbc.password")
                .orElse(null);
        Optional<Source> forced = read(env, properties, "LOCKSMITH_DB_SOURCE", "locksmith.db.source")
                .map(ServerSettings::parseSource);
        OptionalInt postgresVersion = read(env, properties, "LOCKSMITH_PG_VERSION", "locksmith.pg.version")
                .map(ServerSettings::parseMajor)
                .map(OptionalInt::of)
                .orElse(OptionalInt.empty());
        url.ifPresent(u -> {
            if (!u.startsWith("jdbc:postgresql:")) {
                throw new IllegalArgumentException(
                        "LOCKSMITH_JDBC_URL / locksmith.jdbc.url must be a jdbc:postgresql: URL, was " + u);
            }
        });
        return new ServerSettings(url, user, password, forced, postgresVersion);
    }

    private static Optional<String> read(
            Map<String, String> env, Properties properties, String envName, String propertyName) {
        String value = properties.getProperty(propertyName);
        if (value == null || value.isBlank()) {
            value = env.get(envName);
        }
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.trim());
    }

    private static int parseMajor(String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "LOCKSMITH_PG_VERSION / locksmith.pg.version must be a PostgreSQL major version such as 13; was "
                            + value,
                    e);
        }
    }

    private static Source parseSource(String value) {
        try {
            return Source.valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "LOCKSMITH_DB_SOURCE / locksmith.db.source must be one of "
                            + "explicit, testcontainers, embedded; was " + value,
                    e);
        }
    }
}

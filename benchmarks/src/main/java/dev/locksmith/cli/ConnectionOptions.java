package dev.locksmith.cli;

import dev.locksmith.provisioning.ServerSettings;
import java.util.Optional;
import picocli.CommandLine.Option;

/** Connection flags shared by the commands; unset flags fall back to the LOCKSMITH_* variables. */
final class ConnectionOptions {

    @Option(names = "--url", description = "JDBC URL of an existing server (else LOCKSMITH_JDBC_URL)")
    String url;

    @Option(names = "--user", description = "user (else LOCKSMITH_JDBC_USER, else postgres)")
    String user;

    @Option(names = "--password", description = "password (else LOCKSMITH_JDBC_PASSWORD)", interactive = false)
    String password;

    @Option(
            names = "--schema",
            defaultValue = "locksmith",
            description = "the schema locksmith's tables live in (default ${DEFAULT-VALUE})")
    String schema;

    /**
     * A data source for the explicit server, for commands that work on an existing database.
     *
     * @throws picocli.CommandLine.ParameterException when neither --url nor LOCKSMITH_JDBC_URL is set
     */
    org.postgresql.ds.PGSimpleDataSource explicitDataSource(picocli.CommandLine commandLine, String command) {
        ServerSettings s = settings();
        String jdbcUrl = s.jdbcUrl()
                .orElseThrow(() -> new picocli.CommandLine.ParameterException(
                        commandLine, command + " needs --url or LOCKSMITH_JDBC_URL"));
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setUrl(jdbcUrl);
        ds.setUser(s.user());
        if (s.password() != null) {
            ds.setPassword(s.password());
        }
        return ds;
    }

    /** Settings from the environment, overridden by any flag given. */
    ServerSettings settings() {
        ServerSettings env = ServerSettings.fromEnvironment();
        return new ServerSettings(
                url != null ? Optional.of(url) : env.jdbcUrl(),
                user != null ? user : env.user(),
                password != null ? password : env.password(),
                url != null ? Optional.empty() : env.forced(),
                env.postgresVersion());
    }
}

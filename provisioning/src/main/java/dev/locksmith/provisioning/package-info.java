/**
 * A PostgreSQL for tests and tools, found the same way everywhere: an explicit server
 * ({@code LOCKSMITH_JDBC_URL}), else Testcontainers when a Docker engine answers, else an
 * embedded PostgreSQL. {@link dev.locksmith.provisioning.PostgresServer} resolves it;
 * {@link dev.locksmith.provisioning.ScratchDatabases} creates uniquely named databases and drops
 * them at the end of the run.
 */
@NullMarked
package dev.locksmith.provisioning;

import org.jspecify.annotations.NullMarked;

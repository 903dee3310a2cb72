package dev.locksmith.provisioning;

import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A database created for this run; dropped when its {@link ScratchDatabases} set closes.
 *
 * @param name the database name
 * @param jdbcUrl its JDBC URL
 * @param user the user to connect as
 * @param password the password, or null
 * @param dataSource a non-pooled data source for it
 */
public record ScratchDatabase(
        String name, String jdbcUrl, String user, @Nullable String password, DataSource dataSource) {}

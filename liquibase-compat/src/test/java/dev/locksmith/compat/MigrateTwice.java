package dev.locksmith.compat;

import dev.locksmith.schema.LocksmithSchema;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * {@code LocksmithSchema.migrate} twice on one database, as a service migrating at start-up and
 * starting again: the first applies every change set, the second finds nothing to do. Run by
 * {@link ForkedLiquibase#migrateTwice} in a JVM of its own; arguments: JDBC URL, user, password.
 */
public final class MigrateTwice {

    private MigrateTwice() {}

    public static void main(String[] args) {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(args[0]);
        dataSource.setUser(args[1]);
        if (args.length > 2) {
            dataSource.setPassword(args[2]);
        }
        LocksmithSchema.migrate(dataSource);
        LocksmithSchema.migrate(dataSource);
    }
}

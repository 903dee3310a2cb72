package dev.locksmith.cli;

import dev.locksmith.schema.AppliedChangeSet;
import dev.locksmith.schema.LocksmithSchema;
import java.util.List;
import java.util.concurrent.Callable;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Applies the locksmith schema to the database named by --url (or LOCKSMITH_JDBC_URL). */
@Command(name = "migrate", mixinStandardHelpOptions = true,
        description = "Apply the locksmith schema to an existing database (same as the Liquibase CLI route).")
final class MigrateCommand implements Callable<Integer> {

    @Mixin
    private ConnectionOptions connection;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        PGSimpleDataSource ds = connection.explicitDataSource(spec.commandLine(), "migrate");
        // The database as the user named it, without URL parameters (they may carry a password).
        String url = connection.settings().jdbcUrl().orElseThrow().replaceFirst("\\?.*$", "");
        List<AppliedChangeSet> applied = LocksmithSchema.migrate(ds);
        System.out.printf("applied %d change sets to %s%n", applied.size(), url);
        applied.forEach(c -> System.out.printf("  %-24s %s%n", c.id(), c.file()));
        return 0;
    }
}

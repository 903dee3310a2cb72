package dev.locksmith.cli;

import dev.locksmith.schema.AppliedChangeSet;
import dev.locksmith.schema.LocksmithSchema;
import dev.locksmith.schema.SchemaModule;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Applies the locksmith schema to the database named by --url (or LOCKSMITH_JDBC_URL). */
@Command(
        name = "migrate",
        mixinStandardHelpOptions = true,
        description = "Apply the locksmith schema to an existing database (same as the Liquibase CLI route).")
final class MigrateCommand implements Callable<Integer> {

    @Mixin
    private ConnectionOptions connection;

    @Spec
    private CommandSpec spec;

    @Option(
            names = "--modules",
            split = ",",
            description = "modules to apply: queue, pool, accounts, audit " + "(default: all)")
    private List<SchemaModule> modules = new ArrayList<>();

    @Override
    public Integer call() {
        PGSimpleDataSource ds = connection.explicitDataSource(spec.commandLine(), "migrate");
        // The database as the user named it, without URL parameters (they may carry a password).
        String url = connection.settings().jdbcUrl().orElseThrow().replaceFirst("\\?.*$", "");
        Set<SchemaModule> chosen = modules.isEmpty() ? EnumSet.allOf(SchemaModule.class) : EnumSet.copyOf(modules);
        List<AppliedChangeSet> applied = LocksmithSchema.migrate(ds, connection.schema, chosen);
        System.out.printf(
                "applied %d change sets to %s (schema %s, modules %s)%n",
                applied.size(), url, connection.schema, chosen.toString().toLowerCase(java.util.Locale.ROOT));
        applied.forEach(c -> System.out.printf("  %-40s %s%n", c.id(), c.file()));
        return 0;
    }
}

package dev.locksmith.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code locksmith} command-line tool. */
@Command(
        name = "locksmith",
        mixinStandardHelpOptions = true,
        versionProvider = Locksmith.Version.class,
        description =
                "Typed PostgreSQL concurrency control through jOOQ: demo, benchmarks, schema migration, lock report, dashboard.",
        subcommands = {DemoCommand.class, BenchCommand.class, MigrateCommand.class, LocksCommand.class, UiCommand.class
        })
public final class Locksmith implements Runnable {

    /** Held strongly: java.util.logging forgets the level of a logger nobody references. */
    private static final java.util.logging.Logger LIQUIBASE_LOG = java.util.logging.Logger.getLogger("liquibase");

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** Runs the tool and exits with its status. */
    public static void main(String[] args) {
        System.setProperty("liquibase.analytics.enabled", "false");
        System.setProperty("org.jooq.no-logo", "true");
        System.setProperty("org.jooq.no-tips", "true");
        // Liquibase logs through java.util.logging; the tool prints its own summary.
        LIQUIBASE_LOG.setLevel(java.util.logging.Level.WARNING);
        CommandLine cli = commandLine();
        cli.setExecutionExceptionHandler((failure, commandLine, parsed) -> {
            String problem = Failures.connectionProblem(failure).orElse(null);
            if (problem == null) {
                throw failure;
            }
            commandLine.getErr().println("locksmith: " + problem);
            return Failures.CONNECTION_FAILED;
        });
        System.exit(cli.execute(args));
    }

    /**
     * The tool's command line. Enum values are accepted in any case ({@code --modules
     * queue,audit}, as the help and the README write them).
     */
    static CommandLine commandLine() {
        return new CommandLine(new Locksmith()).setCaseInsensitiveEnumValuesAllowed(true);
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** The version the build wrote into the jar's manifest (Implementation-Version). */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Locksmith.class.getPackage().getImplementationVersion();
            return new String[] {"locksmith " + (version != null ? version : "(unpackaged build)")};
        }
    }
}

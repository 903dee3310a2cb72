package dev.locksmith.cli;

import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * Settings for the embedded server a benchmark starts when no explicit server is given: its
 * autovacuum, so that figures can be taken as a user's server runs (autovacuum on) or as the
 * durable service of the development machine does (off). An explicit server is used as it is
 * configured.
 */
final class EmbeddedServerOptions {

    @Option(
            names = "--autovacuum",
            description = "on or off: an embedded server starts with it so (default: the server's own; the "
                    + "embedded server's is on); an explicit server is used as configured")
    String autovacuum;

    /**
     * The server configuration to start an embedded server with.
     *
     * @param commandLine the command, for its usage message
     * @return {@code autovacuum} when given, else nothing
     * @throws CommandLine.ParameterException when {@code --autovacuum} is neither on nor off
     */
    Map<String, String> serverConfig(CommandLine commandLine) {
        if (autovacuum == null) {
            return Map.of();
        }
        if (!List.of("on", "off").contains(autovacuum)) {
            throw new CommandLine.ParameterException(commandLine, "--autovacuum is on or off");
        }
        return Map.of("autovacuum", autovacuum);
    }

    /** {@return the flag as given, for a report's command line; empty when not given} */
    String flag() {
        return autovacuum == null ? "" : " --autovacuum " + autovacuum;
    }
}

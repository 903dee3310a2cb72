package dev.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.schema.SchemaModule;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class LocksmithCommandLineTest {

    @Test
    void migrateTakesModulesAsTheHelpWritesThem() {
        CommandLine.ParseResult parsed = Locksmith.commandLine()
                .parseArgs("migrate", "--url", "jdbc:postgresql://localhost/x", "--modules", "queue,audit");
        List<SchemaModule> modules = parsed.subcommand().matchedOptionValue("--modules", List.of());
        assertThat(modules).containsExactly(SchemaModule.QUEUE, SchemaModule.AUDIT);
    }

    @Test
    void anUnknownModuleIsRefusedWithTheChoices() {
        assertThatThrownBy(() -> Locksmith.commandLine().parseArgs("migrate", "--modules", "queues"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("expected one of");
    }

    @Test
    void autovacuumIsOnOrOffForTheWorkloadsAndTheHorizonBench() {
        for (String command : List.of("bench", "horizon")) {
            String[] args = command.equals("bench")
                    ? new String[] {"bench", "--autovacuum", "sometimes", "sustained"}
                    : new String[] {"bench", "horizon", "--autovacuum", "sometimes"};
            StringWriter err = new StringWriter();
            CommandLine cli = Locksmith.commandLine();
            cli.setErr(new PrintWriter(err, true)); // for every subcommand too
            // a usage error, as for any bad flag
            assertThat(cli.execute(args)).as(command).isEqualTo(2);
            assertThat(err.toString()).as(command).contains("--autovacuum is on or off");
        }
        CommandLine.ParseResult parsed = Locksmith.commandLine().parseArgs("bench", "--autovacuum", "on", "sustained");
        assertThat(parsed.subcommand().<String>matchedOptionValue("--autovacuum", null))
                .isEqualTo("on");
    }
}

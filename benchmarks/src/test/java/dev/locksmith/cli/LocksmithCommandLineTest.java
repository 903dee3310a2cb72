package dev.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.schema.SchemaModule;
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
}

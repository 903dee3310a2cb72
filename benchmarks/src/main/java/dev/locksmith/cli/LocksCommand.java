package dev.locksmith.cli;

import dev.locksmith.audit.BlockingReport;
import java.util.List;
import java.util.concurrent.Callable;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Prints who blocks whom right now in the database named by --url. */
@Command(name = "locks", mixinStandardHelpOptions = true, description = "Print the current blocking report.")
final class LocksCommand implements Callable<Integer> {

    @Mixin
    private ConnectionOptions connection;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        PGSimpleDataSource ds = connection.explicitDataSource(spec.commandLine(), "locks");
        List<BlockingReport.BlockedSession> blocked =
                new BlockingReport(DSL.using(ds, SQLDialect.POSTGRES)).blockedSessions();
        if (blocked.isEmpty()) {
            System.out.println("no session is waiting for a lock");
            return 0;
        }
        for (BlockingReport.BlockedSession s : blocked) {
            System.out.printf(
                    "pid %d%s waits %d ms for %s %s%s: %s%n",
                    s.waitingPid(),
                    s.waiterTxnId().map(id -> " (txn " + id + ")").orElse(""),
                    s.waitingFor().toMillis(),
                    s.lockType(),
                    s.mode(),
                    s.relation().map(r -> " on " + r).orElse(""),
                    s.query());
            for (BlockingReport.Blocker b : s.blockers()) {
                System.out.printf(
                        "    blocked by pid %d%s [%s]: %s%n",
                        b.pid(), b.txnId().map(id -> " (txn " + id + ")").orElse(""), b.state(), b.query());
            }
        }
        return 0;
    }
}

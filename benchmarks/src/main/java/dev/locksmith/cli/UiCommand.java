package dev.locksmith.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.bench.BenchSession;
import dev.locksmith.dashboard.Dashboard;
import dev.locksmith.dashboard.DashboardConfig;
import dev.locksmith.provisioning.ServerSettings;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Serves the dashboard until Ctrl-C: on the database named by --url (or LOCKSMITH_JDBC_URL), or,
 * with neither (or with --demo), on a scratch database obtained the shared way with a demo
 * workload running, so that `./locksmith ui` shows something on a fresh clone.
 */
@Command(
        name = "ui",
        mixinStandardHelpOptions = true,
        description = "Serve the dashboard (queues, jobs, schedules, pool, locks) until Ctrl-C. With --url: that "
                + "database, read-only unless --allow-actions. Without: a scratch database with a demo workload.")
final class UiCommand implements Callable<Integer> {

    @Mixin
    private ConnectionOptions connection;

    @Option(names = "--port", defaultValue = "8080", description = "port (default ${DEFAULT-VALUE}; 0: any free one)")
    int port;

    @Option(
            names = "--bind",
            defaultValue = "127.0.0.1",
            description = "address to listen on (default ${DEFAULT-VALUE}: this machine only)")
    String bind;

    @Option(names = "--allow-actions", description = "allow retry, cancel and delete of jobs (default: read-only)")
    boolean allowActions;

    @Option(
            names = "--basic-auth",
            paramLabel = "USER:PASSWORD",
            description = "require HTTP basic authentication (else LOCKSMITH_UI_BASIC_AUTH)")
    String basicAuth;

    @Option(names = "--demo", description = "a scratch database with a demo workload, even when a URL is set")
    boolean demo;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        ServerSettings settings = connection.settings();
        boolean useDemo = demo || settings.jdbcUrl().isEmpty();
        List<AutoCloseable> resources = new ArrayList<>();
        try {
            DSLContext dsl;
            if (useDemo) {
                BenchSession session = new BenchSession(settings, 40, connection.schema);
                resources.add(session);
                out.printf(
                        "server:    %s via %s%n",
                        session.server().version(), session.server().source().description());
                out.printf(
                        "database:  %s (scratch, dropped at exit), with a demo workload%n",
                        session.database().name());
                // On Ctrl-C the terminal signals the embedded server too: workers shutting down
                // then fail over a few seconds rather than the pool's default 30 s.
                session.pool().setConnectionTimeout(3_000);
                DemoWorkload workload = DemoWorkload.start(session.dsl(), session.pool());
                resources.add(workload);
                dsl = session.dsl();
            } else {
                HikariConfig config = new HikariConfig();
                config.setJdbcUrl(settings.jdbcUrl().orElseThrow());
                config.setUsername(settings.user());
                if (settings.password() != null) {
                    config.setPassword(settings.password());
                }
                config.setMaximumPoolSize(6);
                config.setMinimumIdle(0);
                config.setPoolName("locksmith-ui");
                config.setReadOnly(!allowActions);
                HikariDataSource pool = new HikariDataSource(config);
                resources.add(pool);
                dsl = DSL.using(pool, SQLDialect.POSTGRES);
                out.printf("database:  %s%n", settings.jdbcUrl().orElseThrow());
            }
            DashboardConfig config = DashboardConfig.builder(
                            Locksmith.builder(dsl).schema(connection.schema).build())
                    .readOnly(!allowActions && !useDemo)
                    .title(useDemo ? "locksmith demo" : "locksmith")
                    .build();
            Dashboard.Builder builder = Dashboard.builder(config).bind(bind).port(port);
            String auth = basicAuth != null ? basicAuth : System.getenv("LOCKSMITH_UI_BASIC_AUTH");
            if (auth != null && !auth.isEmpty()) {
                int colon = auth.indexOf(':');
                if (colon < 1) {
                    throw new picocli.CommandLine.ParameterException(
                            new picocli.CommandLine(this), "--basic-auth must be USER:PASSWORD");
                }
                builder.basicAuth(auth.substring(0, colon), auth.substring(colon + 1));
            }
            Dashboard dashboard = builder.start();
            resources.add(dashboard);
            out.printf(
                    "dashboard: %s  (%s; Ctrl-C to stop)%n",
                    dashboard.uri(), config.readOnly() ? "read-only" : "actions enabled");
            out.flush();
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(
                            () -> {
                                closeAll(resources);
                                stopped.countDown();
                            },
                            "locksmith-ui-shutdown"));
            stopped.await();
            return 0;
        } catch (RuntimeException | InterruptedException e) {
            closeAll(resources);
            throw e;
        }
    }

    /**
     * Closes in reverse order of opening: the server, the workload, then the database; each gets
     * at most 5 s, so that Ctrl-C ends the tool even when the embedded server went down with the
     * terminal's signal and the workers are still finding that out.
     */
    private static synchronized void closeAll(List<AutoCloseable> resources) {
        for (int i = resources.size() - 1; i >= 0; i--) {
            AutoCloseable resource = resources.get(i);
            Thread closing = new Thread(
                    () -> {
                        try {
                            resource.close();
                        } catch (Exception e) {
                            System.err.println("locksmith ui: closing " + resource + " failed: " + e);
                        }
                    },
                    "locksmith-ui-close");
            closing.setDaemon(true);
            closing.start();
            try {
                closing.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        resources.clear();
    }
}

package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.engine.Sql;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A thread that LISTENs on {@code locksmith_jobs} on a connection of its own and calls back
 * when a notification names its queue; it reconnects after failures. LISTEN is session state,
 * so the connection gets {@code UNLISTEN *} before it goes back to a pool. PgJDBC hands the
 * notifications over as soon as it has read them ({@link PromptNotifications}).
 */
final class QueueNotifications {

    private static final Logger LOG = LoggerFactory.getLogger(QueueNotifications.class);

    private final DataSource dataSource;
    private final String queue;
    private final Runnable onNotification;
    private final Runnable onListening;
    private final Duration retryPause;
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile boolean listening;
    private final Thread thread;

    QueueNotifications(
            DataSource dataSource, String queue, Duration retryPause, Runnable onListening, Runnable onNotification) {
        this.dataSource = dataSource;
        this.queue = queue;
        this.retryPause = retryPause;
        this.onListening = onListening;
        this.onNotification = onNotification;
        this.thread = new Thread(this::loop, "locksmith-" + queue + "-listen");
        this.thread.setDaemon(true);
    }

    void start() {
        running.set(true);
        thread.start();
    }

    void stop() {
        running.set(false);
        thread.interrupt();
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@return whether the connection is up and LISTENing now} */
    boolean listening() {
        return listening;
    }

    private void loop() {
        while (running.get()) {
            try (Connection connection = dataSource.getConnection()) {
                listen(connection);
            } catch (SQLException | RuntimeException e) {
                if (running.get()) {
                    LOG.warn("LISTEN {} failed, polling until it reconnects", Sql.CHANNEL, e);
                    try {
                        Thread.sleep(retryPause.toMillis());
                    } catch (InterruptedException interrupted) {
                        return;
                    }
                }
            }
        }
    }

    private void listen(Connection connection) throws SQLException {
        connection.setAutoCommit(true);
        PGConnection pg = connection.unwrap(PGConnection.class);
        try (Statement statement = connection.createStatement()) {
            // jOOQ has no LISTEN; the channel is a constant identifier, nothing is interpolated.
            statement.execute("LISTEN locksmith_jobs");
        }
        Runnable restore = PromptNotifications.apply(connection);
        try {
            listening = true;
            onListening.run();
            while (running.get() && !Thread.currentThread().isInterrupted()) {
                PGNotification[] received = pg.getNotifications(250);
                if (received == null) {
                    continue;
                }
                for (PGNotification n : received) {
                    if (Sql.CHANNEL.equals(n.getName()) && queue.equals(n.getParameter())) {
                        onNotification.run();
                        break;
                    }
                }
            }
        } finally {
            listening = false;
            restore.run();
            try (Statement statement = connection.createStatement()) {
                statement.execute("UNLISTEN *");
            } catch (SQLException e) {
                LOG.debug("UNLISTEN failed", e);
            }
        }
    }
}

package dev.locksmith.jobs.runtime;

import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes PgJDBC hand a LISTEN connection's notifications over as soon as it has read them.
 *
 * <p>After each notification it reads, {@code PGConnection.getNotifications} asks its stream
 * whether more is pending. When nothing is buffered, the stream finds out by reading one byte with
 * a 1 ms socket timeout, and PgJDBC 42.7 (42.7.14 included) does that every time: it records when
 * it last checked only when the stream has ended, never after a timeout. So every notification
 * is handed over a millisecond late, and notifications that arrive less than a millisecond apart
 * (a busy channel: many producers, many queues) keep it reading and hand over none of them until
 * a gap: measured, a listener alone heard notifications sent 1 ms apart 44-76 ms late at the
 * median, and 1.1 ms late when sent 10 ms apart.
 *
 * <p>Putting the stream's next check far ahead makes the question "are bytes buffered?" alone,
 * which is the right answer on a plain socket; on TLS, bytes not yet decrypted are read by the next
 * call, which blocks for them. The field is private to PgJDBC and reached by reflection: with
 * another driver, or a PgJDBC whose fields differ, nothing changes (said once, at DEBUG), and the
 * listener works as before, a millisecond later. The field is put back before the connection
 * returns to its pool. <b>Internal: not API.</b>
 */
final class PromptNotifications {

    private static final Logger LOG = LoggerFactory.getLogger(PromptNotifications.class);

    /** {@code QueryExecutorBase.pgStream}, or null when PgJDBC's fields are not as expected. */
    private static final @Nullable Field STREAM;
    /** {@code PGStream.nextStreamAvailableCheckTime}, or null likewise. */
    private static final @Nullable Field NEXT_CHECK;

    private static final AtomicBoolean SAID = new AtomicBoolean();

    static {
        Field stream = null;
        Field nextCheck = null;
        try {
            stream = Class.forName("org.postgresql.core.QueryExecutorBase").getDeclaredField("pgStream");
            nextCheck = Class.forName("org.postgresql.core.PGStream").getDeclaredField("nextStreamAvailableCheckTime");
            if (nextCheck.getType() != long.class) {
                throw new NoSuchFieldException("nextStreamAvailableCheckTime is not a long");
            }
            stream.setAccessible(true);
            nextCheck.setAccessible(true);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LOG.debug("PgJDBC's stream is not as expected: notifications are handed over with its 1 ms wait", e);
            stream = null;
            nextCheck = null;
        }
        STREAM = stream;
        NEXT_CHECK = nextCheck;
    }

    private PromptNotifications() {}

    /** {@return whether PgJDBC's fields are as expected, so that {@link #apply} changes something} */
    static boolean reachesPgJdbc() {
        return STREAM != null && NEXT_CHECK != null;
    }

    /**
     * Makes {@code connection}'s notifications prompt, when it is a PgJDBC connection.
     *
     * @param connection the LISTEN connection
     * @return what puts the connection back as it was: run it before the connection is closed
     *     (returned to its pool)
     */
    static Runnable apply(Connection connection) {
        Field streamField = STREAM;
        Field nextCheck = NEXT_CHECK;
        if (streamField == null || nextCheck == null) {
            return () -> {};
        }
        try {
            Object executor =
                    connection.unwrap(org.postgresql.core.BaseConnection.class).getQueryExecutor();
            if (!streamField.getDeclaringClass().isInstance(executor)) {
                throw new IllegalStateException(
                        "query executor " + executor.getClass().getName());
            }
            Object stream = streamField.get(executor);
            long before = nextCheck.getLong(stream);
            nextCheck.setLong(stream, Long.MAX_VALUE);
            return () -> {
                try {
                    nextCheck.setLong(stream, before);
                } catch (IllegalAccessException | RuntimeException e) {
                    LOG.debug("could not put PgJDBC's stream back as it was", e);
                }
            };
        } catch (SQLException | ReflectiveOperationException | RuntimeException e) {
            if (SAID.compareAndSet(false, true)) {
                LOG.debug("notifications on this connection are handed over with PgJDBC's 1 ms wait", e);
            }
            return () -> {};
        }
    }
}

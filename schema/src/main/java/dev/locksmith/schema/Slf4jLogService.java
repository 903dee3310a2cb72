package dev.locksmith.schema;

import java.util.logging.Level;
import liquibase.Scope;
import liquibase.logging.Logger;
import liquibase.logging.core.AbstractLogService;
import liquibase.logging.core.AbstractLogger;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * Liquibase's log, through SLF4J, one level quieter: Liquibase narrates every change set, lock
 * and summary at INFO, which from a library migrating at start-up is detail, so its INFO and
 * CONFIG arrive at DEBUG and its FINE and below at TRACE; WARNING stays WARN and SEVERE is ERROR.
 * One warning is not one: the changelogs' {@code CREATE SCHEMA IF NOT EXISTS} draws a PostgreSQL
 * NOTICE ("already exists, skipping") for every module after the first, which Liquibase before
 * 4.33 passes on as a warning; it arrives at DEBUG. (Raising the session's
 * {@code client_min_messages} instead would change a setting of the caller's pooled connection.)
 * Loggers are named after Liquibase's classes ({@code liquibase.*}), so their level is set under
 * {@code liquibase} as usual. Installed only in the scope of {@link LocksmithSchema}'s own calls:
 * Liquibase's default (java.util.logging, whose console handler writes INFO to standard error) is
 * left alone for everyone else. The API used here is the same from Liquibase 4.29 to 5.0.
 *
 * <p>A scope of one's own is a child of Liquibase's root scope, which Liquibase builds on a
 * thread's first call, before any child exists, with its default log service: its service
 * discovery then narrates some twenty records through java.util.logging (at FINE, so they reach
 * JUL's handlers wherever the {@code liquibase} JUL logger is set to show detail).
 * {@link #readyRootScope()} builds that root scope first, with the {@code liquibase} JUL logger
 * off for that moment.
 */
final class Slf4jLogService extends AbstractLogService {

    /** Whether this thread has had Liquibase's root scope built by {@link #readyRootScope()}. */
    private static final ThreadLocal<Boolean> ROOT_SCOPE_READY = ThreadLocal.withInitial(() -> Boolean.FALSE);

    /**
     * Makes sure Liquibase's root scope exists for the calling thread, built without a record
     * reaching java.util.logging: the {@code liquibase} JUL logger is off while it is built (a
     * few milliseconds, once per thread that migrates; any level set on it is restored).
     */
    static void readyRootScope() {
        if (ROOT_SCOPE_READY.get()) {
            return;
        }
        java.util.logging.Logger jul = java.util.logging.Logger.getLogger("liquibase");
        // one thread at a time, so that no thread restores a level another one set to OFF
        synchronized (ROOT_SCOPE_READY) {
            Level level = jul.getLevel();
            jul.setLevel(Level.OFF);
            try {
                Scope.getCurrentScope();
            } finally {
                jul.setLevel(level);
            }
        }
        ROOT_SCOPE_READY.set(Boolean.TRUE);
    }

    @Override
    public int getPriority() {
        return PRIORITY_SPECIALIZED;
    }

    @Override
    @SuppressWarnings("rawtypes") // Liquibase's signature
    public Logger getLog(Class clazz) {
        return new Slf4jLogger(LoggerFactory.getLogger(clazz == null ? "liquibase" : clazz.getName()));
    }

    /** One Liquibase logger over one SLF4J logger. */
    @SuppressWarnings("try") // Liquibase's Logger is AutoCloseable; closing this one does nothing
    private static final class Slf4jLogger extends AbstractLogger {

        private final org.slf4j.Logger log;

        Slf4jLogger(org.slf4j.Logger log) {
            this.log = log;
        }

        @Override
        public void log(Level level, String message, Throwable e) {
            if (level == null || Level.OFF.equals(level)) {
                return;
            }
            int value = level.intValue();
            if (value >= Level.SEVERE.intValue()) {
                if (log.isErrorEnabled()) {
                    log.error(message, e);
                }
            } else if (value >= Level.WARNING.intValue() && !isSkippedCreation(message)) {
                if (log.isWarnEnabled()) {
                    log.warn(message, e);
                }
            } else if (value >= Level.CONFIG.intValue()) {
                if (log.isDebugEnabled()) {
                    log.debug(message, e);
                }
            } else if (log.isTraceEnabled()) {
                log.trace(message, e);
            }
        }

        /** PostgreSQL's NOTICE for an {@code IF NOT EXISTS} that found the object. */
        private static boolean isSkippedCreation(@Nullable String message) {
            return message != null && message.contains("already exists, skipping");
        }
    }
}

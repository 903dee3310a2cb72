package dev.locksmith.observe;

import java.util.Locale;

/**
 * How an {@link Operation} that did not throw ended. Which operation ends with which outcome is
 * said on each {@link Operation} type; an operation that throws ends through
 * {@link Observation#error(Throwable)} instead.
 */
public enum Outcome {
    /** It did what was asked: jobs claimed, completed, an account acquired, rows locked, money moved. */
    OK,
    /** Nothing to do: no job was due, no account was idle. */
    EMPTY,
    /** The caller's lease was gone (expired and rescued, or cancelled); nothing changed. */
    LEASE_LOST,
    /** A failed job was rescheduled for another attempt. */
    RETRY_SCHEDULED,
    /** A failed job used its last attempt, or its handler failed it permanently: {@code failed} for good. */
    FAILED,
    /** A transfer found the source balance too low; nothing changed. */
    INSUFFICIENT_FUNDS,
    /** A transfer with the same transfer id had already moved the money; nothing changed now. */
    ALREADY_TRANSFERRED,
    /** A bounded wait ended without the account or lock it waited for. */
    TIMED_OUT,
    /** A handler snoozed its job: {@code pending} again later, the attempt not counted. */
    SNOOZED,
    /** A handler cancelled its job: {@code cancelled}. */
    CANCELLED;

    /**
     * The outcome as a metric tag or span attribute value.
     *
     * @return the name in lower case, such as {@code lease_lost}
     */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}

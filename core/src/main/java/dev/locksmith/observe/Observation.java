package dev.locksmith.observe;

/**
 * An operation in progress, as {@link LocksmithObserver#start(Operation)} returned it. locksmith
 * ends every observation exactly once, with {@link #end(Outcome)} or {@link #error(Throwable)},
 * on the thread that started it.
 */
public interface Observation {

    /** Records nothing. */
    Observation NONE = new Observation() {
        @Override
        public void end(Outcome outcome) {}

        @Override
        public void error(Throwable error) {}
    };

    /**
     * The operation returned normally.
     *
     * @param outcome what it came to
     */
    void end(Outcome outcome);

    /**
     * The operation threw.
     *
     * @param error what it threw (a {@link dev.locksmith.exception.LocksmithException} for database
     *     failures; for a handler, whatever the handler threw)
     */
    void error(Throwable error);

    /**
     * The W3C {@code traceparent} of the span this observation records, for work that continues
     * elsewhere and links back to it (a leased worker's batched completion links to the handler
     * runs it completes: {@link Operation.CompleteJobs#links()}).
     *
     * @return the span's {@code traceparent}, or null (the default) when there is none
     */
    default @org.jspecify.annotations.Nullable String traceparent() {
        return null;
    }
}

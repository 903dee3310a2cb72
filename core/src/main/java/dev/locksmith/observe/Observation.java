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
}

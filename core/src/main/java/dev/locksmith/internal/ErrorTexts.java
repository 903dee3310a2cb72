package dev.locksmith.internal;

/** The text {@code last_error} keeps of a failure. <b>Internal: not API.</b> */
public final class ErrorTexts {

    /** How much of a failure's stack trace {@code last_error} keeps. */
    public static final int MAX_ERROR_LENGTH = 8_000;
    /** Frames kept of each throwable of the cause chain. */
    public static final int FRAMES_PER_THROWABLE = 15;

    private static final int MAX_CAUSES = 10;

    private ErrorTexts() {}

    /**
     * What {@code last_error} keeps of a failure: its stack trace (the cause of a jOOQ
     * {@code DataAccessException}, which only wraps it), with at most
     * {@value #FRAMES_PER_THROWABLE} frames of each throwable in the cause chain so that the
     * root cause survives a deep stack, cut to {@link #MAX_ERROR_LENGTH} in all.
     *
     * @param error the failure
     * @return the text to store
     */
    public static String describe(Throwable error) {
        Throwable first = error instanceof org.jooq.exception.DataAccessException && error.getCause() != null
                ? error.getCause()
                : error;
        StringBuilder text = new StringBuilder();
        int depth = 0;
        for (Throwable t = first;
                t != null && depth < MAX_CAUSES;
                t = t.getCause() == t ? null : t.getCause(), depth++) {
            text.append(depth == 0 ? "" : "\nCaused by: ").append(t);
            StackTraceElement[] frames = t.getStackTrace();
            for (int i = 0; i < Math.min(frames.length, FRAMES_PER_THROWABLE); i++) {
                text.append("\n\tat ").append(frames[i]);
            }
            if (frames.length > FRAMES_PER_THROWABLE) {
                text.append("\n\t... ")
                        .append(frames.length - FRAMES_PER_THROWABLE)
                        .append(" more");
            }
        }
        if (text.length() <= MAX_ERROR_LENGTH) {
            return text.toString();
        }
        String marker = "\n\t... (cut at " + MAX_ERROR_LENGTH + " characters)";
        return text.substring(0, MAX_ERROR_LENGTH - marker.length()) + marker;
    }
}

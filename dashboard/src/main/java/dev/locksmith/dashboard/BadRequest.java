package dev.locksmith.dashboard;

/** A request the dashboard refuses with 400; the message is shown (escaped) to the user. */
final class BadRequest extends RuntimeException {

    private static final long serialVersionUID = 1L;

    BadRequest(String message) {
        super(message);
    }
}

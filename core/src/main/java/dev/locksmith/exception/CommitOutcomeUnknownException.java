package dev.locksmith.exception;

import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * The connection failed while {@code COMMIT} was in flight, and locksmith could not find out
 * whether the transaction committed. The changes may or may not be in the database: running
 * the transaction again could apply them twice, so locksmith never retries this.
 *
 * <p>When PostgreSQL gave the transaction an id before {@code COMMIT} was sent,
 * {@link #transactionId()} has it; {@code SELECT pg_xact_status('<id>'::xid8)} on any
 * connection tells the outcome once the server can (for as long as the server keeps the
 * commit log of that transaction). Make the work idempotent (for transfers, give each one a
 * transfer id) to retry it safely.
 */
public final class CommitOutcomeUnknownException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** The transaction id ({@code xid8}), or null when it had none or was not looked up. */
    private final @Nullable Long transactionId;

    /**
     * A commit whose outcome could not be learned.
     *
     * @param message what happened
     * @param sqlState the SQLState of the failure, if any
     * @param transactionId the transaction id ({@code xid8}) to ask about, or null when it had none
     * @param cause the failure of {@code COMMIT} or of the connection
     */
    public CommitOutcomeUnknownException(
            String message, @Nullable String sqlState, @Nullable Long transactionId, Throwable cause) {
        super(message, sqlState, cause);
        this.transactionId = transactionId;
    }

    /**
     * The transaction to ask PostgreSQL about.
     *
     * @return its transaction id ({@code xid8}), to pass to {@code pg_xact_status}; empty when the
     *     transaction had none (it had written nothing when {@code COMMIT} was sent) or the
     *     outcome was not looked up (commit resolution off)
     */
    public OptionalLong transactionId() {
        return transactionId == null ? OptionalLong.empty() : OptionalLong.of(transactionId);
    }
}

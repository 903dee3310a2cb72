package dev.locksmith.jobs;

/**
 * How an enqueue wakes idle workers ({@link JobQueueConfig.Builder#wakeUp}).
 *
 * <p>A {@code NOTIFY} sent inside the producer's transaction takes a database-wide lock at that
 * transaction's commit: every committing transaction that sent one waits for the others, so
 * concurrent producers lose group commit (the single-job enqueue rate halved in this project's
 * benchmark). {@link #AFTER_COMMIT} sends it from a separate connection once the enqueue has
 * committed, for every queue that had jobs committed, coalescing what many producers commit at
 * once into one statement, at most one every 2 ms per {@code DataSource}, except for one producer
 * per {@code DataSource} at a time, whose own transaction carries it; and it wakes the queue's
 * workers running in the same JVM at once, in-process.
 */
public enum WakeUp {
    /**
     * After the enqueue commits: this JVM's workers of the queue at once, in-process, and the
     * others by a {@code NOTIFY} on a connection of the queue's own, coalesced (the default); or,
     * for one producer per {@code DataSource} at a time, by a {@code NOTIFY} in its own transaction
     * (an auto-committed enqueue, a jOOQ transaction run by jOOQ's own transaction provider on a
     * {@code Locksmith}'s context, or a transaction a {@link dev.locksmith.CommitHook} says is a
     * local one on the enqueue's connection, committed in one phase, as the Spring Boot starter's
     * does when every transaction manager is a local one; never one that will be prepared, nor on
     * Citus), which reaches other JVMs without the sender's round trip; its commit takes the
     * notify lock, one such commit per {@code DataSource} at a time. The
     * commit must be one locksmith sees: an auto-committed enqueue, a jOOQ transaction started on
     * a {@code Locksmith}'s context (or the queue's), a worker's handler transaction, or a
     * transaction a {@link dev.locksmith.CommitHook} knows of (the Spring Boot starter installs one
     * for Spring-managed transactions). In a transaction it cannot see, the enqueue falls back to
     * {@link #IN_TRANSACTION}, so that no wake-up is lost.
     */
    AFTER_COMMIT,
    /**
     * {@code NOTIFY} inside the producer's transaction, delivered when it commits; its commit then
     * takes the database-wide notify lock.
     */
    IN_TRANSACTION,
    /** No wake-up: workers find new jobs when they poll. */
    NONE
}

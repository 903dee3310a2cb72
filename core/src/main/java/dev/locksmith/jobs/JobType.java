package dev.locksmith.jobs;

import java.util.Objects;

/**
 * A kind of job with a typed payload, the queue it goes to by default, and the class its payload
 * decodes to. Declared once and shared by the code that enqueues and the code that handles:
 *
 * <pre>{@code
 * record SendEmail(String to, String subject, LocalDate sendOn) {}
 *
 * static final JobType<SendEmail> SEND_EMAIL = JobType.of("emails", "send_email", SendEmail.class);
 *
 * queue.enqueue(tx, SEND_EMAIL, new SendEmail("ada@example.com", "Welcome", LocalDate.now()));
 * queue.enqueue(tx, queue.newJob(SEND_EMAIL, email).priority(10).uniqueKey("welcome:" + userId).build());
 *
 * JobHandlers handlers = JobHandlers.builder()
 *         .on(SEND_EMAIL, (job, email) -> mailer.send(email.to(), email.subject()))
 *         .build();
 * }</pre>
 *
 * <p>The payload is stored as {@code jsonb}, encoded by the queue's {@link JobCodec}
 * ({@link JobQueueConfig#codec()}; Jackson by default), so other tools can still read and query
 * it.
 *
 * @param queue the queue jobs of this type are enqueued on, 1 to 128 characters, not blank
 * @param kind the kind stored in {@code jobs.kind} and dispatched on, 1 to 128 characters, not blank
 * @param payloadType the class the payload is encoded from and decoded to
 * @param <T> the payload type
 */
public record JobType<T>(String queue, String kind, Class<T> payloadType) {

    /**
     * Checks the names and the class.
     *
     * @param queue the queue, 1 to 128 characters, not blank
     * @param kind the kind, 1 to 128 characters, not blank
     * @param payloadType the payload class; not a primitive type
     * @throws IllegalArgumentException naming an invalid name, or for a primitive payload type
     * @throws NullPointerException when an argument is null
     */
    public JobType {
        NewJob.requireName("queue", queue, 128);
        NewJob.requireName("kind", kind, 128);
        Objects.requireNonNull(payloadType, "payloadType");
        if (payloadType.isPrimitive()) {
            throw new IllegalArgumentException(
                    "payloadType must be a class, not the primitive type " + payloadType.getName());
        }
    }

    /**
     * A job type.
     *
     * @param queue the queue jobs of this type are enqueued on, 1 to 128 characters, not blank
     * @param kind the kind, 1 to 128 characters, not blank
     * @param payloadType the payload class
     * @param <T> the payload type
     * @return the type
     * @throws IllegalArgumentException naming an invalid name
     */
    public static <T> JobType<T> of(String queue, String kind, Class<T> payloadType) {
        return new JobType<>(queue, kind, payloadType);
    }

    /**
     * The same kind and payload on another queue (a faster lane, a tenant's queue).
     *
     * @param otherQueue the queue, 1 to 128 characters, not blank
     * @return the type on {@code otherQueue}
     * @throws IllegalArgumentException for an invalid queue name
     */
    public JobType<T> inQueue(String otherQueue) {
        return new JobType<>(otherQueue, kind, payloadType);
    }
}

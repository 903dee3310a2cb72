package dev.locksmith.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the handler of a queue, for which the starter runs a worker ({@link LocksmithWorkers}).
 * Either on a bean that is a {@link dev.locksmith.jobs.JobHandler} or a
 * {@link dev.locksmith.jobs.BatchJobHandler} (on its class, or on the {@code @Bean} method that
 * makes it):
 *
 * <pre>{@code
 * @Component
 * @LocksmithHandler(queue = "emails")
 * class EmailHandler implements JobHandler {
 *     public void handle(Job job, DSLContext tx) { ... }
 * }
 * }</pre>
 *
 * <p>or on a method of any bean that takes {@code (Job, DSLContext)} (run as a
 * {@code JobHandler}) or {@code (List<Job>, DSLContext)} (run as a {@code BatchJobHandler}):
 *
 * <pre>{@code
 * @LocksmithHandler(queue = "reports")
 * void render(Job job, DSLContext tx) { ... }
 * }</pre>
 *
 * <p>A {@code JobHandler} runs in leased mode ({@link dev.locksmith.jobs.JobWorker}) unless
 * {@code locksmith.queues.<queue>.mode=transactional} says otherwise (then each job of a batch is
 * handed to it in turn, in the batch's transaction); a {@code BatchJobHandler} runs in
 * transactional mode ({@link dev.locksmith.jobs.TransactionalWorker}) only. One handler per
 * queue: a second one fails start-up, as do an invalid queue name and a method of another
 * signature.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LocksmithHandler {

    /**
     * The queue whose jobs this handler runs.
     *
     * @return the queue name, 1 to 128 characters, not blank; its settings are
     *     {@code locksmith.queues.<queue>.*}
     */
    String queue();
}

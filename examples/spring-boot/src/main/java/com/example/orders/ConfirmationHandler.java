package com.example.orders;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.spring.LocksmithHandler;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Sends the confirmation of an order: the handler of queue {@value OrderService#CONFIRMATIONS},
 * run by the starter's leased worker ({@code locksmith.queues.confirmations.*}).
 *
 * <p>{@code tx} is the transaction that completes the job: the {@code sent_confirmations} row
 * commits with the job's completion, or neither does. The row is written before sending, so a
 * second delivery of a job whose confirmation is recorded would fail on the row's primary key
 * before sending again; the send itself is at least once (a worker that dies after sending and
 * before committing leaves the job to be run again), which is why {@link ConfirmationSender}
 * should be idempotent. At shutdown, a send still running after
 * {@code locksmith.queues.confirmations.shutdown-grace} is interrupted, its transaction rolls back
 * and the job is given back to the queue for the next start.
 */
@Component
@LocksmithHandler(queue = OrderService.CONFIRMATIONS)
class ConfirmationHandler implements JobHandler {

    private static final Logger LOG = LoggerFactory.getLogger(ConfirmationHandler.class);

    private final Orders orders;
    private final ConfirmationSender sender;
    private final ObjectMapper json;

    ConfirmationHandler(Orders orders, ConfirmationSender sender, ObjectMapper json) {
        this.orders = orders;
        this.sender = sender;
        this.json = json;
    }

    @Override
    public void handle(Job job, DSLContext tx) throws Exception {
        JsonNode orderId = json.readTree(job.payload()).path("orderId");
        if (!orderId.canConvertToLong()) {
            throw new IllegalArgumentException("job " + job.id() + " has no orderId: " + job.payload());
        }
        Order order = orders.find(tx, orderId.asLong())
                .orElseThrow(() -> new IllegalStateException("job " + job.id() + ": no order " + orderId));
        orders.recordConfirmation(tx, order.id(), job.id());
        sender.send(order);
        LOG.info("sent the confirmation of order {} (job {}, attempt {})", order.id(), job.id(), job.attempts());
    }
}

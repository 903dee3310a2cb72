package com.example.orders;

import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.math.BigDecimal;
import org.jooq.DSLContext;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Places orders. */
@Service
public class OrderService {

    /** The queue of confirmation jobs ({@link ConfirmationHandler}). */
    static final String CONFIRMATIONS = "confirmations";

    private final DSLContext dsl;
    private final JobQueue queue;
    private final Orders orders;

    OrderService(DSLContext dsl, JobQueue queue, Orders orders) {
        this.dsl = dsl;
        this.queue = queue;
        this.orders = orders;
    }

    /**
     * Stores the order and enqueues its confirmation in one transaction. Spring Boot's
     * {@code DSLContext} (which the starter's {@code JobQueue} also uses) joins the transaction of
     * this {@code @Transactional} method, so the order and the job commit together or not at all:
     * no confirmation for an order that was never stored, no order without its confirmation. The
     * worker is woken (NOTIFY) when the transaction commits, not before.
     *
     * @param customer who orders, not blank
     * @param amount positive, at most two decimal places
     * @param failAfterEnqueue throw after both writes, to show that they roll back together
     * @return the stored order and its job's id
     * @throws SimulatedFailureException when {@code failAfterEnqueue}; nothing was stored
     */
    @Transactional
    public PlacedOrder place(String customer, BigDecimal amount, boolean failAfterEnqueue) {
        Order order = orders.insert(dsl, customer, amount);
        long jobId = queue.enqueue(
                dsl,
                NewJob.builder(CONFIRMATIONS, "send-confirmation")
                        .payload("{\"orderId\": " + order.id() + "}")
                        .uniqueKey("order-" + order.id())
                        .build());
        if (failAfterEnqueue) {
            throw new SimulatedFailureException(order.id(), jobId);
        }
        return new PlacedOrder(order, jobId);
    }

    /**
     * An order just stored, and the job that will confirm it.
     *
     * @param order the order
     * @param confirmationJobId the id of its {@code send-confirmation} job
     */
    public record PlacedOrder(Order order, long confirmationJobId) {}
}

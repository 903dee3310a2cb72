package com.example.orders;

/**
 * Sends an order's confirmation to the customer: the side effect outside the database (mail, a
 * message broker, a partner's API). The job that calls it runs at least once, so a send may be
 * repeated when a worker dies between sending and committing; a real sender passes the order id
 * on as an idempotency key where the other side accepts one.
 */
public interface ConfirmationSender {

    /**
     * Sends the confirmation of {@code order}.
     *
     * @param order the order to confirm
     * @throws Exception any failure: the job's attempt fails and is retried with backoff
     */
    void send(Order order) throws Exception;
}

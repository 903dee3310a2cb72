package com.example.orders;

/**
 * Thrown by {@link OrderService#place} after it wrote the order and enqueued its confirmation,
 * when the request asked for it ({@code ?fail=after-enqueue}): the transaction rolls back, so
 * neither the order nor the job exists afterwards. Answered with 500 and both ids.
 */
final class SimulatedFailureException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final long orderId;
    private final long jobId;

    SimulatedFailureException(long orderId, long jobId) {
        super("order " + orderId + " and its confirmation job " + jobId
                + " were written, then the service failed: the transaction rolled back both");
        this.orderId = orderId;
        this.jobId = jobId;
    }

    long orderId() {
        return orderId;
    }

    long jobId() {
        return jobId;
    }
}

package com.example.orders;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Records the order id of every confirmation sent, in order, and lets a test wait for them. */
class RecordingConfirmationSender implements ConfirmationSender {

    private final List<Long> sent = new ArrayList<>();

    @Override
    public synchronized void send(Order order) {
        sent.add(order.id());
        notifyAll();
    }

    /** {@return the order ids sent so far, one entry per send} */
    synchronized List<Long> sent() {
        return List.copyOf(sent);
    }

    /** {@return how often the confirmation of {@code orderId} was sent} */
    synchronized long timesSent(long orderId) {
        return sent.stream().filter(id -> id == orderId).count();
    }

    /**
     * Waits until at least {@code count} sends have happened, or {@code timeout} has passed.
     *
     * @return the sends so far
     */
    synchronized List<Long> awaitSends(int count, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long left;
        while (sent.size() < count && (left = deadline - System.nanoTime()) > 0) {
            wait(Math.max(1, left / 1_000_000));
        }
        return List.copyOf(sent);
    }

    /**
     * Waits until the confirmation of {@code orderId} has been sent, or {@code timeout} has passed.
     *
     * @return whether it was sent
     */
    synchronized boolean awaitSent(long orderId, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long left;
        while (!sent.contains(orderId) && (left = deadline - System.nanoTime()) > 0) {
            wait(Math.max(1, left / 1_000_000));
        }
        return sent.contains(orderId);
    }
}
